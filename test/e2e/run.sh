#!/usr/bin/env bash
# End-to-end suite: the BUILT and PACKED node pack, installed as a community package the way n8n
# installs one, inside a real n8n (2.41.1, Node 24) against the sandbox, a private Redis with the
# runner, and a stub OpenAI-compatible model; then `npm run dev` itself.
#   bash test/e2e/run.sh          (or: npm run test:e2e)
# Then the same pack in n8n's queue mode (queue.sh): main, worker and webhook processor on a
# private PostgreSQL and Redis.
# Env: E2E_KEEP=1 keeps the throwaway work folder; E2E_SKIP_LIVE=1 skips the `n8n start` step;
#      E2E_SKIP_DEV=1 skips the `npm run dev` check; E2E_SKIP_QUEUE=1 skips the queue-mode phase;
#      E2E_SKIP_BUILD=1 reuses the pack's dist/;
#      E2E_SANDBOX_FAULTS='<json>' injects sandbox faults (suite self-test).
# Prints "e2e: N passed, M failed" last and exits non-zero on any failure.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/test/e2e"
# The node pack's package folder: `npm pack` runs there, and its dist/ is what the tarball holds.
PACK_DIR="$ROOT/packages/n8n-nodes-convo"
export E2E_PACK_DIR="$PACK_DIR"
E2E="${E2E_DIR:-$ROOT/.e2e}"
START=$(date +%s)
log() { echo "[e2e +$(( $(date +%s) - START ))s] $*" >&2; }
fail_early() { log "$*"; VERDICT=printed; echo "e2e: 0 passed, 1 failed"; exit 1; }

SYSTEM_NODE="$(command -v node)"
# The EXIT trap can fire inside a redirected command; fds 3/4 keep the original stdout/stderr.
exec 3>&1 4>&2
VERDICT=""
GROUPS_STARTED=()
WORK=""
# Folders outside the work folder (n8n user folders, PostgreSQL's cluster): removed with it.
TEMP_DIRS=()
cleanup() {
  local rc=$?
  for pg in "${GROUPS_STARTED[@]}"; do kill -TERM -- "-$pg" 2>/dev/null || true; done
  for pg in "${GROUPS_STARTED[@]}"; do
    for _ in $(seq 1 30); do kill -0 -- "-$pg" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pg" 2>/dev/null || true
  done
  if [[ -n "$WORK" && -d "$WORK" ]]; then
    if [[ "${E2E_KEEP:-}" == 1 || $rc -ne 0 ]]; then
      log "work folder kept: $WORK (outside it: ${TEMP_DIRS[*]:-nothing})" 2>&4
    else
      rm -rf "$WORK" "${TEMP_DIRS[@]}"
    fi
  fi
  if [[ -z "$VERDICT" ]]; then
    [[ $rc -eq 0 ]] && rc=1
    log "interrupted or failed before the checks (exit $rc)" 2>&4
    echo "e2e: 0 passed, 1 failed" >&3
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs a command in its own process group (so its children can be killed with it) in the background.
start_group() { setsid "$@" & GROUPS_STARTED+=("$!"); }
# Runs a command in its own process group, waits for it, then kills anything it left behind.
run_group() {
  local t="$1"; shift
  setsid timeout --kill-after=10 "$t" "$@" & local pg=$!
  GROUPS_STARTED+=("$pg")
  wait "$pg"; local rc=$?
  kill -TERM -- "-$pg" 2>/dev/null || true
  return $rc
}
free_port() { "$SYSTEM_NODE" -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
# Waits until a URL answers 2xx (or the group died); $1 what, $2 url, $3 tries of 0.5 s, $4 group.
wait_http() {
  for _ in $(seq 1 "$3"); do
    "$SYSTEM_NODE" -e "fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" "$2" 2>/dev/null && return 0
    [[ -n "${4:-}" ]] && ! kill -0 "$4" 2>/dev/null && break
    sleep 0.5
  done
  log "$1 did not answer at $2"; return 1
}

# --- toolchain and build --------------------------------------------------
t0=$(date +%s)
bash "$HERE/install-n8n.sh" </dev/null || fail_early "install-n8n.sh failed"
log "toolchain ready in $(( $(date +%s) - t0 ))s"
if [[ "${E2E_SKIP_BUILD:-}" != 1 ]]; then
  (cd "$ROOT" && npm run build --silent </dev/null) >&2 || fail_early "npm run build failed"
fi
[[ -f "$PACK_DIR/dist/nodes/Convo/Convo.node.js" ]] || fail_early "packages/n8n-nodes-convo/dist/ has no Convo node"
N8N_HOME=""

NODE24_BIN="$E2E/node24/node_modules/node/bin"
export E2E_N8N_DIR="$E2E/n8n"
N8N="$E2E/n8n/node_modules/.bin/n8n"
mkdir -p "$E2E/runs"
WORK="$(mktemp -d "$E2E/runs/run.XXXXXX")"
mkdir -p "$WORK/exec" "$WORK/logs" "$WORK/redis"
log "work folder $WORK"

# --- sandbox, Redis, runner, stub model ---------------------------------------
E2E_RUNNER_TOKEN="e2e-$("$SYSTEM_NODE" -e "console.log(require('crypto').randomBytes(20).toString('hex'))")"
export E2E_RUNNER_TOKEN
# Starts what the examples talk to, each in a process group of its own: the sandbox, a private
# Redis with the runner, and the stub model. $1: the folder of that run (its logs/ and redis/).
# Sets SANDBOX, REDIS_PORT, RUNNER_URL and STUB; returns 1 (its log shown) when one does not start.
start_services() {
  local dir="$1" fixture_env runner_port runner_pg
  mkdir -p "$dir/logs" "$dir/redis"
  start_group "$SYSTEM_NODE" "$ROOT/sandbox/bin/convo-sandbox.mjs" --port 0 >"$dir/logs/sandbox.log" 2>&1 </dev/null
  SANDBOX=""
  for _ in $(seq 1 100); do
    SANDBOX="$(grep -o 'base_url *http://127\.0\.0\.1:[0-9]*' "$dir/logs/sandbox.log" 2>/dev/null | grep -o 'http://.*' || true)"
    [[ -n "$SANDBOX" ]] && break
    sleep 0.2
  done
  [[ -n "$SANDBOX" ]] || { cat "$dir/logs/sandbox.log" >&2; log "sandbox did not start"; return 1; }
  log "sandbox at $SANDBOX"

  REDIS_PORT="$(free_port)"
  start_group redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --dir "$dir/redis" --maxmemory-policy noeviction \
    >"$dir/logs/redis.log" 2>&1 </dev/null
  for _ in $(seq 1 50); do grep -q 'Ready to accept connections' "$dir/logs/redis.log" 2>/dev/null && break; sleep 0.2; done
  grep -q 'Ready to accept connections' "$dir/logs/redis.log" || { cat "$dir/logs/redis.log" >&2; log "redis-server did not start"; return 1; }

  fixture_env="$("$SYSTEM_NODE" -e "
    fetch(process.argv[1] + '/__sandbox/fixture').then((r) => r.json()).then((f) => {
      console.log('CONVO_EXTERNAL_URL=' + f.externalUrl); console.log('CONVO_API_KEY=' + f.businesses[0].apiKey);
      console.log('CONVO_BASE_URL=' + f.baseUrl); console.log('CONVO_ACCESS_TOKEN=' + f.businesses[0].accessToken);
    })" "$SANDBOX")"
  runner_port="$(free_port)"
  RUNNER_URL="http://127.0.0.1:$runner_port"
  (
    # shellcheck disable=SC2046
    export $(echo "$fixture_env" | xargs)
    export REDIS_URL="redis://127.0.0.1:$REDIS_PORT" RUNNER_TOKEN="$E2E_RUNNER_TOKEN" RUNNER_HTTP_HOST=127.0.0.1 \
      RUNNER_HTTP_PORT="$runner_port" RUNNER_PREFIX='e2e' LOG_LEVEL=info \
      RUNNER_ALLOW_PRIVATE_URLS=true \
      RUNNER_TRACKING_SCHEDULE='2s,5s,12s,20s' RUNNER_TRACKING_RATE=20
    # Loopback URLs: the operator's opt-in. Delivery tracking through A1 (CONVO_BASE_URL and
    # CONVO_ACCESS_TOKEN above) on a short schedule: the sandbox reads a message 10 s after its send,
    # so the campaign's delivery settles (campaign.delivery_settled) within the live step.
    exec setsid "$SYSTEM_NODE" "$ROOT/runner/bin/convo-runner.mjs" start >"$dir/logs/runner.log" 2>&1 </dev/null
  ) &
  runner_pg="$!"
  GROUPS_STARTED+=("$runner_pg")
  wait_http "the runner" "$RUNNER_URL/readyz" 120 "$runner_pg" || { tail -30 "$dir/logs/runner.log" >&2; log "runner did not start"; return 1; }
  log "runner at $RUNNER_URL (Redis on port $REDIS_PORT)"

  start_group "$SYSTEM_NODE" "$ROOT/scripts/dev/stub-model.mjs" --port 0 >"$dir/logs/stub-model.log" 2>&1 </dev/null
  STUB=""
  for _ in $(seq 1 50); do
    STUB="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$dir/logs/stub-model.log" 2>/dev/null | head -1 || true)"
    [[ -n "$STUB" ]] && break
    sleep 0.2
  done
  [[ -n "$STUB" ]] || { log "stub model did not start"; return 1; }
  log "stub model at $STUB"
}
start_services "$WORK" || fail_early "the services did not start"

"$SYSTEM_NODE" "$HERE/prepare.mjs" "$SANDBOX" "$WORK" "$RUNNER_URL" "$STUB" >&2 || fail_early "prepare.mjs failed"

# --- n8n, with the pack installed as a community package ----------------------
export PATH="$NODE24_BIN:$PATH"
unset npm_config_nodedir NODE_OPTIONS || true
# n8n's user folder lies outside this checkout (under /tmp): walking up from the installed package
# must not reach the checkout's node_modules, so n8n-workflow and zod can only come from n8n itself,
# as in a user's n8n. $WORK/n8n-home points there.
N8N_HOME="$(mktemp -d "${TMPDIR:-/tmp}/convo-e2e-n8n.XXXXXX")"
TEMP_DIRS+=("$N8N_HOME")
ln -s "$N8N_HOME" "$WORK/n8n-home"
export N8N_USER_FOLDER="$N8N_HOME"
unset N8N_CUSTOM_EXTENSIONS || true
# `npm pack` (what `npm publish` uploads), then n8n's own install steps (install-package.mjs).
t0=$(date +%s)
mkdir -p "$WORK/pack"
TARBALL="$(cd "$PACK_DIR" && npm pack --silent --ignore-scripts --pack-destination "$WORK/pack" </dev/null 2>"$WORK/logs/npm-pack.log" | tail -1)"
[[ -n "$TARBALL" && -f "$WORK/pack/$TARBALL" ]] || { cat "$WORK/logs/npm-pack.log" >&2; fail_early "npm pack failed"; }
"$SYSTEM_NODE" "$HERE/install-package.mjs" "$WORK/pack/$TARBALL" "$N8N_USER_FOLDER/.n8n" >"$WORK/community-install.json" 2>"$WORK/logs/install-package.log" \
  || { cat "$WORK/logs/install-package.log" >&2; fail_early "installing $TARBALL as a community package failed"; }
log "packed $TARBALL and installed it as a community package into $N8N_USER_FOLDER/.n8n/nodes in $(( $(date +%s) - t0 ))s"
export DB_TYPE=sqlite
export N8N_ENCRYPTION_KEY="e2e-convo-fixed-encryption-key-0001"
export N8N_DIAGNOSTICS_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false N8N_PERSONALIZATION_ENABLED=false
export N8N_TEMPLATES_ENABLED=false N8N_COMMUNITY_PACKAGES_ENABLED=true N8N_DISABLED_MODULES=mcp-registry
export N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS=false N8N_SECURE_COOKIE=false
export N8N_LISTEN_ADDRESS=127.0.0.1 N8N_HOST=127.0.0.1
N8N_PORT="$(free_port)"
export N8N_PORT
export N8N_RUNNERS_BROKER_LISTEN_ADDRESS=127.0.0.1
N8N_RUNNERS_BROKER_PORT="$(free_port)"
export N8N_RUNNERS_BROKER_PORT
export N8N_BLOCK_ENV_ACCESS_IN_NODE=false
mkdir -p "$N8N_USER_FOLDER"

n8n_cmd() { run_group "${N8N_CMD_TIMEOUT:-180}" "$N8N" "$@" </dev/null; }
# Executes one imported workflow; its output, exit code and time go to $WORK/exec/<id>.*
# The sandbox's request counts before and after (<id>.requests-before/after.json) tell what that
# execution itself asked the service.
sandbox_counts() { "$SYSTEM_NODE" -e "fetch(process.argv[1] + '/__sandbox/requests').then((r) => r.text()).then((t) => process.stdout.write(t))" "$SANDBOX" >"$1" 2>/dev/null || true; }
n8n_execute() {
  local id="$1" t0; t0=$(date +%s)
  sandbox_counts "$WORK/exec/$id.requests-before.json"
  n8n_cmd execute --id="$id" --rawOutput >"$WORK/exec/$id.out" 2>"$WORK/exec/$id.err"
  echo $? >"$WORK/exec/$id.rc"
  sandbox_counts "$WORK/exec/$id.requests-after.json"
  log "executed $id (rc $(cat "$WORK/exec/$id.rc")) in $(( $(date +%s) - t0 ))s"
}
# The ids of the examples prepare.mjs gave mode $1; $2 the manifest (the single-process run's by default).
ids_of_mode() { "$SYSTEM_NODE" -e "for (const w of require(process.argv[1]).workflows) if (w.mode === process.argv[2]) console.log(w.id)" "${2:-$WORK/manifest.json}" "$1"; }

t0=$(date +%s)
n8n_cmd import:credentials --input="$WORK/credentials.json" >"$WORK/logs/import-credentials.log" 2>&1 \
  || { tail -30 "$WORK/logs/import-credentials.log" >&2; fail_early "n8n import:credentials failed"; }
n8n_cmd import:workflow --separate --input="$WORK/workflows" >>"$WORK/logs/import-workflows.log" 2>&1 \
  || { tail -30 "$WORK/logs/import-workflows.log" >&2; fail_early "n8n import:workflow failed"; }
for id in $(ids_of_mode publish); do
  n8n_cmd publish:workflow --id="$id" >>"$WORK/logs/publish.log" 2>&1 \
    || { tail -30 "$WORK/logs/publish.log" >&2; fail_early "n8n publish:workflow $id failed"; }
done
log "imported credentials and workflows, published $(ids_of_mode publish | xargs) in $(( $(date +%s) - t0 ))s"

for id in $(ids_of_mode execute); do n8n_execute "$id"; done

# --- live: published workflows under `n8n start` ------------------------------
if [[ "${E2E_SKIP_LIVE:-}" != 1 ]]; then
  # shellcheck source=/dev/null
  source "$HERE/live.sh"
fi

# --- npm run dev ----------------------------------------------------------------
if [[ "${E2E_SKIP_DEV:-}" != 1 ]]; then
  t0=$(date +%s)
  PATH="$(dirname "$SYSTEM_NODE"):$PATH" run_group 400 "$SYSTEM_NODE" "$HERE/dev-check.mjs" "$WORK" >&2 || log "dev-check.mjs failed (see above)"
  log "npm run dev step took $(( $(date +%s) - t0 ))s"
fi

# --- queue mode: main, worker and webhook processor ------------------------------
if [[ "${E2E_SKIP_QUEUE:-}" != 1 ]]; then
  # shellcheck source=/dev/null
  source "$HERE/queue.sh"
fi

# --- verdict ------------------------------------------------------------------
log "ran everything in $(( $(date +%s) - START ))s; checking"
"$SYSTEM_NODE" "$HERE/check.mjs" "$WORK"
rc=$?
VERDICT=printed
exit $rc
