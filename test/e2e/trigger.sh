# Sourced by run.sh (shares its functions and n8n environment): the Convo Trigger in a running
# n8n. Imports and publishes a trigger workflow, starts `n8n start`, registers the production
# URL with the sandbox, sends an inbound message and records what happened in $WORK/trigger.json.
TRIGGER_WF_ID="e2eConvoTrigger1"
TRIGGER_WEBHOOK_ID="5b0e2e00-c0de-4e2e-9a11-0000000000e2"
cat >"$WORK/trigger-workflow.json" <<JSON
{
  "id": "$TRIGGER_WF_ID",
  "name": "Convo e2e: trigger",
  "nodes": [
    {
      "id": "9e2e0000-0000-4000-8000-000000000001",
      "name": "Convo Trigger",
      "type": "CUSTOM.convoTrigger",
      "typeVersion": 1,
      "position": [0, 0],
      "webhookId": "$TRIGGER_WEBHOOK_ID",
      "parameters": { "httpMethod": "POST", "authentication": "none", "triggerOn": "any" }
    }
  ],
  "connections": {},
  "settings": { "executionOrder": "v1" },
  "active": false
}
JSON
t0=$(date +%s)
if n8n_cmd import:workflow --input="$WORK/trigger-workflow.json" >>"$WORK/logs/import-workflows.log" 2>&1 \
  && n8n_cmd publish:workflow --id="$TRIGGER_WF_ID" >"$WORK/logs/publish.log" 2>&1; then
  N8N_PORT="$(free_port)"   # picked just before use
  start_group "$N8N" start >"$WORK/logs/n8n-start.log" 2>&1 </dev/null
  N8N_START_PG="${GROUPS_STARTED[-1]}"
  ready=""
  for _ in $(seq 1 120); do
    if "$SYSTEM_NODE" -e "fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" \
      "http://127.0.0.1:$N8N_PORT/healthz/readiness" 2>/dev/null; then ready=1; break; fi
    kill -0 "$N8N_START_PG" 2>/dev/null || break
    sleep 0.5
  done
  if [[ -n "$ready" ]]; then
    log "n8n start ready on port $N8N_PORT in $(( $(date +%s) - t0 ))s"
    "$NODE24_BIN/node" --no-warnings "$HERE/trigger.mjs" "$WORK" \
      "http://127.0.0.1:$N8N_PORT/webhook/$TRIGGER_WEBHOOK_ID/convo" "$N8N_USER_FOLDER/.n8n/database.sqlite" "$TRIGGER_WF_ID" >&2 \
      || log "trigger.mjs failed (see above)"
  else
    log "n8n start did not become ready; last log lines:"; tail -30 "$WORK/logs/n8n-start.log" >&2
    echo '{"url":"(n8n start not ready)"}' >"$WORK/trigger.json"
  fi
  kill -TERM -- "-$N8N_START_PG" 2>/dev/null || true
else
  log "could not import/publish the trigger workflow"; tail -20 "$WORK/logs/import-workflows.log" "$WORK/logs/publish.log" >&2
  echo '{"url":"(not published)"}' >"$WORK/trigger.json"
fi
log "trigger step took $(( $(date +%s) - t0 ))s"
