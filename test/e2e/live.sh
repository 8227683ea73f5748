#!/usr/bin/env bash
# Sourced by run.sh (shares its functions and n8n environment): the published examples under
# `n8n start`. The reply example's Convo Trigger gets a sandbox delivery of an inbound message;
# the campaign summary's Convo Runner Trigger registered itself with the runner on activation,
# then the campaign example runs (`n8n execute`, beside the running n8n) and the runner's
# campaign.finished delivery starts the summary; once the campaign's delivery is tracked to the end,
# its campaign.delivery_settled delivery starts the follow-up example. live.mjs records what happened in
# $WORK/live-*.json for check.mjs.
t0=$(date +%s)
N8N_PORT="$(free_port)"   # picked just before use
start_group "$N8N" start >"$WORK/logs/n8n-start.log" 2>&1 </dev/null
N8N_START_PG="${GROUPS_STARTED[-1]}"
LIVE=("$NODE24_BIN/node" --no-warnings "$HERE/live.mjs")
LIVE_ARGS=("$WORK" "http://127.0.0.1:$N8N_PORT" "$N8N_USER_FOLDER/.n8n/database.sqlite")
if wait_http "n8n start" "http://127.0.0.1:$N8N_PORT/healthz/readiness" 240 "$N8N_START_PG"; then
  log "n8n start ready on port $N8N_PORT in $(( $(date +%s) - t0 ))s"
  "${LIVE[@]}" reply "${LIVE_ARGS[@]}" >&2 || log "live.mjs reply failed (see above)"
  if "${LIVE[@]}" runner-registered "${LIVE_ARGS[@]}" >&2; then
    # A second n8n process on the same database: its own task-runner broker port.
    for id in $(ids_of_mode live); do N8N_RUNNERS_BROKER_PORT="$(free_port)" n8n_execute "$id"; done
    "${LIVE[@]}" campaign-finished "${LIVE_ARGS[@]}" >&2 || log "live.mjs campaign-finished failed (see above)"
    "${LIVE[@]}" delivery-settled "${LIVE_ARGS[@]}" >&2 || log "live.mjs delivery-settled failed (see above)"
  else
    log "the Convo Runner Triggers did not register with the runner; last n8n log lines:"; tail -20 "$WORK/logs/n8n-start.log" >&2
  fi
else
  log "n8n start did not become ready; last log lines:"; tail -30 "$WORK/logs/n8n-start.log" >&2
  echo '{"error":"n8n start not ready"}' >"$WORK/live-reply.json"
fi
kill -TERM -- "-$N8N_START_PG" 2>/dev/null || true
for _ in $(seq 1 30); do kill -0 -- "-$N8N_START_PG" 2>/dev/null || break; sleep 0.5; done
log "live step took $(( $(date +%s) - t0 ))s"
