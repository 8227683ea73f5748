#!/usr/bin/env bash
# Sourced by run.sh (shares its functions, the packed tarball and the runner token): the pack in
# n8n's queue mode, set up as n8n documents it. A main process (EXECUTIONS_MODE=queue, production
# webhooks off), a worker (`n8n worker`) and a webhook processor (`n8n webhook`), each with its own
# user folder holding the packed tarball installed as a community package, share a private Redis
# (n8n's Bull queue) and a PostgreSQL cluster of their own. The examples run against a second set
# of services (sandbox, runner, stub model) so each phase's checks see only that phase's effects.
# The manual examples run through main's REST API (the editor's Run button; manual executions are
# offloaded to the worker), the published ones get their deliveries through the webhook processor's
# port. Everything lands in $WORK/queue for check.mjs; a setup failure is recorded in
# queue/queue-error.json and fails the queue-mode checks, not the whole run.
TQ=$(date +%s)
Q="$WORK/queue"
mkdir -p "$Q/exec" "$Q/logs" "$Q/bull"

queue_fail() { log "queue mode: $*"; "$SYSTEM_NODE" -e 'console.log(JSON.stringify({ error: process.argv[1] }))' "$*" >"$Q/queue-error.json"; return 1; }

# PostgreSQL's server binaries: Debian keeps them in /usr/lib/postgresql/<major>/bin (newest wins),
# elsewhere they are on PATH.
pg_bin_dir() {
  local initdb
  initdb="$(ls -1d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1)"
  [[ -n "$initdb" ]] || initdb="$(command -v initdb 2>/dev/null || true)"
  [[ -n "$initdb" ]] && dirname "$initdb"
}

# A PostgreSQL cluster of the run's own: initdb into a temporary folder, trust authentication, a
# free port on 127.0.0.1 and its socket in that folder. initdb and postgres refuse to run as root:
# as root they run as the `postgres` user, who owns the folder. Sets PG_PORT.
start_postgres() {
  local pg_bin pg_dir as_pg=()
  pg_bin="$(pg_bin_dir)" || true
  [[ -n "$pg_bin" ]] || { queue_fail "no initdb found (apt-get install postgresql)"; return 1; }
  pg_dir="$(mktemp -d "${TMPDIR:-/tmp}/convo-e2e-pg.XXXXXX")"
  TEMP_DIRS+=("$pg_dir")
  ln -s "$pg_dir" "$Q/postgres"
  if [[ $EUID -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || { queue_fail "running as root and there is no postgres user to run PostgreSQL as"; return 1; }
    chown postgres: "$pg_dir"
    as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups)
  fi
  "${as_pg[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -U n8n --auth=trust --encoding=UTF8 --no-locale --no-sync \
    >"$Q/logs/initdb.log" 2>&1 </dev/null || { tail -20 "$Q/logs/initdb.log" >&2; queue_fail "initdb failed"; return 1; }
  PG_PORT="$(free_port)"
  # A throwaway cluster: durability settings off (fsync and friends) for speed.
  start_group "${as_pg[@]}" "$pg_bin/postgres" -D "$pg_dir/data" -c listen_addresses=127.0.0.1 -p "$PG_PORT" -k "$pg_dir" \
    -c fsync=off -c synchronous_commit=off -c full_page_writes=off >"$Q/logs/postgres.log" 2>&1 </dev/null
  PG_PG="${GROUPS_STARTED[-1]}"
  for _ in $(seq 1 60); do
    "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U n8n -d postgres && break
    kill -0 "$PG_PG" 2>/dev/null || break
    sleep 0.25
  done
  "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U n8n n8n >>"$Q/logs/initdb.log" 2>&1 \
    || { tail -20 "$Q/logs/postgres.log" >&2; queue_fail "PostgreSQL did not start"; return 1; }
  log "queue mode: PostgreSQL $("$pg_bin/postgres" --version | grep -o '[0-9][0-9.]*' | head -1) on port $PG_PORT ($pg_dir)"
}

# Stops process groups together and waits up to 15 s for them; $1 the signal, then the groups.
stop_groups() {
  local sig="$1" pg; shift
  for pg in "$@"; do kill "-$sig" -- "-$pg" 2>/dev/null || true; done
  for pg in "$@"; do
    for _ in $(seq 1 30); do kill -0 -- "-$pg" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pg" 2>/dev/null || true
  done
}

queue_phase() {
  local t0 role pids=() pid ok
  t0=$(date +%s)
  start_postgres || return 1
  start_services "$Q" || { queue_fail "the sandbox, the runner or the stub model did not start"; return 1; }
  "$SYSTEM_NODE" "$HERE/prepare.mjs" "$SANDBOX" "$Q" "$RUNNER_URL" "$STUB" >&2 || { queue_fail "prepare.mjs failed"; return 1; }
  # n8n's Bull queue on a Redis of its own (the runner's BullMQ keeps its own above).
  BULL_PORT="$(free_port)"
  start_group redis-server --port "$BULL_PORT" --bind 127.0.0.1 --save '' --dir "$Q/bull" >"$Q/logs/bull-redis.log" 2>&1 </dev/null
  for _ in $(seq 1 50); do grep -q 'Ready to accept connections' "$Q/logs/bull-redis.log" 2>/dev/null && break; sleep 0.2; done
  grep -q 'Ready to accept connections' "$Q/logs/bull-redis.log" || { queue_fail "redis-server for n8n's queue did not start"; return 1; }
  log "queue mode: services, PostgreSQL and Redis up in $(( $(date +%s) - t0 ))s"

  # Every n8n process gets the packed tarball installed the way n8n installs a community package,
  # in a user folder of its own (as separate containers or hosts have), outside the checkout.
  t0=$(date +%s)
  QHOME="$(mktemp -d "${TMPDIR:-/tmp}/convo-e2e-queue.XXXXXX")"
  TEMP_DIRS+=("$QHOME")
  ln -s "$QHOME" "$Q/n8n-homes"
  for role in main worker webhook; do
    "$SYSTEM_NODE" "$HERE/install-package.mjs" "$WORK/pack/$TARBALL" "$QHOME/$role/.n8n" \
      >"$Q/community-install-$role.json" 2>"$Q/logs/install-package-$role.log" </dev/null &
    pids+=("$!")
  done
  ok=1
  for pid in "${pids[@]}"; do wait "$pid" || ok=0; done
  [[ $ok == 1 ]] || { queue_fail "installing $TARBALL into the three user folders failed (logs/install-package-*.log)"; return 1; }
  log "queue mode: $TARBALL installed into main's, the worker's and the webhook processor's user folders in $(( $(date +%s) - t0 ))s"

  MAIN_PORT="$(free_port)"; WEBHOOK_PORT="$(free_port)"; WORKER_HEALTH_PORT="$(free_port)"
  # n8n's queue-mode settings, the same for every process (the encryption key is exported by run.sh).
  # WEBHOOK_URL is the webhook processor (n8n's docs: the load balancer in front of the webhook
  # processors): the URLs the triggers register point there. JSON logs carry the workerId n8n
  # records when a job finishes.
  QUEUE_ENV=(
    EXECUTIONS_MODE=queue
    QUEUE_BULL_REDIS_HOST=127.0.0.1 "QUEUE_BULL_REDIS_PORT=$BULL_PORT"
    DB_TYPE=postgresdb DB_POSTGRESDB_HOST=127.0.0.1 "DB_POSTGRESDB_PORT=$PG_PORT" DB_POSTGRESDB_DATABASE=n8n
    DB_POSTGRESDB_USER=n8n DB_POSTGRESDB_PASSWORD=
    OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS=true
    "WEBHOOK_URL=http://127.0.0.1:$WEBHOOK_PORT/"
    N8N_LOG_FORMAT=json N8N_GRACEFUL_SHUTDOWN_TIMEOUT=5
  )
  # Imports into the shared database (the first command runs n8n's migrations), with main's user
  # folder; publishing waits for main (queue.mjs publish, as the editor does it).
  t0=$(date +%s)
  q_cmd() { run_group 180 env "${QUEUE_ENV[@]}" "N8N_USER_FOLDER=$QHOME/main" "N8N_RUNNERS_BROKER_PORT=$(free_port)" "$N8N" "$@" </dev/null; }
  q_cmd import:credentials --input="$Q/credentials.json" >"$Q/logs/import-credentials.log" 2>&1 \
    || { tail -30 "$Q/logs/import-credentials.log" >&2; queue_fail "n8n import:credentials failed"; return 1; }
  q_cmd import:workflow --separate --input="$Q/workflows" >"$Q/logs/import-workflows.log" 2>&1 \
    || { tail -30 "$Q/logs/import-workflows.log" >&2; queue_fail "n8n import:workflow failed"; return 1; }
  log "queue mode: imported credentials and workflows into PostgreSQL in $(( $(date +%s) - t0 ))s"

  # The three processes, started together; each answers its readiness once up.
  t0=$(date +%s)
  start_group env "${QUEUE_ENV[@]}" "N8N_USER_FOLDER=$QHOME/main" "N8N_PORT=$MAIN_PORT" "N8N_RUNNERS_BROKER_PORT=$(free_port)" \
    N8N_DISABLE_PRODUCTION_MAIN_PROCESS=true "$N8N" start >"$Q/logs/n8n-main.log" 2>&1 </dev/null
  Q_MAIN_PG="${GROUPS_STARTED[-1]}"
  start_group env "${QUEUE_ENV[@]}" "N8N_USER_FOLDER=$QHOME/worker" "N8N_RUNNERS_BROKER_PORT=$(free_port)" \
    QUEUE_HEALTH_CHECK_ACTIVE=true "QUEUE_HEALTH_CHECK_PORT=$WORKER_HEALTH_PORT" N8N_WORKER_SERVER_ADDRESS=127.0.0.1 \
    "$N8N" worker >"$Q/logs/n8n-worker.log" 2>&1 </dev/null
  Q_WORKER_PG="${GROUPS_STARTED[-1]}"
  start_group env "${QUEUE_ENV[@]}" "N8N_USER_FOLDER=$QHOME/webhook" "N8N_PORT=$WEBHOOK_PORT" "N8N_RUNNERS_BROKER_PORT=$(free_port)" \
    "$N8N" webhook >"$Q/logs/n8n-webhook.log" 2>&1 </dev/null
  Q_WEBHOOK_PG="${GROUPS_STARTED[-1]}"
  wait_http "n8n main (queue mode)" "http://127.0.0.1:$MAIN_PORT/healthz/readiness" 240 "$Q_MAIN_PG" \
    || { tail -30 "$Q/logs/n8n-main.log" >&2; queue_fail "n8n main did not become ready"; return 1; }
  wait_http "n8n worker" "http://127.0.0.1:$WORKER_HEALTH_PORT/healthz/readiness" 240 "$Q_WORKER_PG" \
    || { tail -30 "$Q/logs/n8n-worker.log" >&2; queue_fail "n8n worker did not become ready"; return 1; }
  wait_http "n8n webhook processor" "http://127.0.0.1:$WEBHOOK_PORT/healthz/readiness" 240 "$Q_WEBHOOK_PG" \
    || { tail -30 "$Q/logs/n8n-webhook.log" >&2; queue_fail "n8n webhook processor did not become ready"; return 1; }
  log "queue mode: main (port $MAIN_PORT), worker and webhook processor (port $WEBHOOK_PORT) ready in $(( $(date +%s) - t0 ))s"
  printf '{"mainUrl":"http://127.0.0.1:%s","webhookUrl":"http://127.0.0.1:%s","postgresPort":%s,"bullRedisPort":%s}\n' \
    "$MAIN_PORT" "$WEBHOOK_PORT" "$PG_PORT" "$BULL_PORT" >"$Q/queue.json"

  # The examples: manual ones through main's REST API (run on the worker), the published ones
  # through the webhook processor; live.mjs reads the executions from PostgreSQL.
  t0=$(date +%s)
  local queue_js=("$NODE24_BIN/node" --no-warnings "$HERE/queue.mjs")
  local live=("$NODE24_BIN/node" --no-warnings "$HERE/live.mjs")
  local live_args=("$Q" "http://127.0.0.1:$WEBHOOK_PORT" "postgres://n8n@127.0.0.1:$PG_PORT/n8n")
  local main_url="http://127.0.0.1:$MAIN_PORT"
  # shellcheck disable=SC2046
  "${queue_js[@]}" publish "$Q" "$main_url" $(ids_of_mode publish "$Q/manifest.json") >&2 || log "queue.mjs publish failed (see above)"
  # shellcheck disable=SC2046
  "${queue_js[@]}" execute "$Q" "$main_url" $(ids_of_mode execute "$Q/manifest.json") >&2 || log "queue.mjs execute failed (see above)"
  "${live[@]}" reply "${live_args[@]}" >&2 || log "live.mjs reply (queue mode) failed (see above)"
  "${queue_js[@]}" main-webhooks "$Q" "$main_url" >&2 || log "queue.mjs main-webhooks failed (see above)"
  if "${live[@]}" runner-registered "${live_args[@]}" >&2; then
    # shellcheck disable=SC2046
    "${queue_js[@]}" execute "$Q" "$main_url" $(ids_of_mode live "$Q/manifest.json") >&2 || log "queue.mjs execute (live) failed (see above)"
    "${live[@]}" campaign-finished "${live_args[@]}" >&2 || log "live.mjs campaign-finished (queue mode) failed (see above)"
    "${live[@]}" delivery-settled "${live_args[@]}" >&2 || log "live.mjs delivery-settled (queue mode) failed (see above)"
  else
    log "queue mode: the Convo Runner Triggers did not register with the runner; last main log lines:"; tail -20 "$Q/logs/n8n-main.log" >&2
  fi
  log "queue mode: examples took $(( $(date +%s) - t0 ))s"

  # Stopped here (not only at exit) so their logs are complete for check.mjs; PostgreSQL last.
  stop_groups TERM "$Q_WEBHOOK_PG" "$Q_WORKER_PG" "$Q_MAIN_PG"
  stop_groups INT "$PG_PG"
}

queue_phase || true
log "queue mode phase took $(( $(date +%s) - TQ ))s"
