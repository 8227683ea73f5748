#!/usr/bin/env bash
# The container test (`npm run test:containers`): builds the three images of runner/Dockerfile
# with podman, brings compose.yaml up with podman-compose (all services, as the demo profile
# does, and two workers), runs compose-check.mjs against the published ports, then takes the stack
# down (also on failure or interrupt) and checks that no container of it is left.
#
# Needs: root on Debian 12, `bash ../shared/containers/base-images.sh --with-n8n` run once (the
# base images under their official names, podman's configuration), node, /usr/bin/chromium.
# What the test works around, and only here (compose.yaml stays what a Docker user runs):
#   - podman-compose 1.0.3 knows no profiles (it starts every service, the demo's sandbox too) and
#     ignores --scale: the worker's two instances come from an override file (deploy.replicas);
#   - it does not wait for `depends_on: condition: service_healthy`: the check waits for health;
#   - no systemd here, so healthchecks never run by themselves: `podman healthcheck run NAME`.
# Env: CONTAINERS_KEEP=1 leaves the stack up (inspect it, then `podman-compose -p ... down -v`);
#      CONTAINERS_SKIP_BUILD=1 uses the three images as they are (iterating on the checks).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/test/containers"
START=$(date +%s)
log() { echo "[containers +$(( $(date +%s) - START ))s] $*" >&2; }
PROJECT="convotest$$"
STACK="$(mktemp -d "${TMPDIR:-/tmp}/convo-compose.XXXXXX")"
UP=0
TIMINGS=()
timed() { local name="$1" t0; shift; t0=$(date +%s); "$@"; local rc=$?; TIMINGS+=("$name $(( $(date +%s) - t0 ))s"); return $rc; }

# Machines with no container registry (these): base-images.sh's local stand-ins and podman settings.
# Elsewhere (a GitHub runner): podman's defaults, pulling the official images.
BASE_IMAGES="$ROOT/../shared/containers/base-images.sh"
if [[ -f "$BASE_IMAGES" ]]; then
  # shellcheck disable=SC1090
  source "$(bash "$BASE_IMAGES" --env)" || { echo "run bash ../shared/containers/base-images.sh --with-n8n first" >&2; exit 1; }
else
  export PODMAN_BUILD_ARGS="--format docker"
fi
compose() { podman-compose -p "$PROJECT" -f "$STACK/compose.yaml" -f "$STACK/compose.test.yaml" "$@"; }

cleanup() {
  local rc=$?
  if (( UP )) && [[ "${CONTAINERS_KEEP:-}" != 1 ]]; then
    log "taking the stack down"
    compose down -v -t 30 >"$STACK/down.log" 2>&1 || { log "podman-compose down failed:"; tail -20 "$STACK/down.log" >&2; }
    local left
    left="$(podman ps -a --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}} {{.Status}}')"
    if [[ -n "$left" ]]; then
      log "containers of $PROJECT left after down: $left"
      podman ps -aq --filter "label=io.podman.compose.project=$PROJECT" | xargs -r podman rm -f >/dev/null 2>&1
      rc=1
    else
      log "no container of $PROJECT is left"
    fi
    podman volume ls -q | grep "^${PROJECT}_" | xargs -r podman volume rm -f >/dev/null 2>&1
    podman network rm -f "${PROJECT}_default" >/dev/null 2>&1
  fi
  TIMINGS+=("total $(( $(date +%s) - START ))s")
  log "timings: ${TIMINGS[*]}"
  [[ $rc -eq 0 ]] && rm -rf "$STACK" || log "stack folder kept: $STACK"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

# --- images -------------------------------------------------------------------------------------
build() { # target tag
  # shellcheck disable=SC2086
  podman build $PODMAN_BUILD_ARGS -f "$ROOT/runner/Dockerfile" --target "$1" -t "$2" "$ROOT" >"$STACK/build-$1.log" 2>&1 \
    || { tail -40 "$STACK/build-$1.log" >&2; log "building $1 failed"; exit 1; }
  log "built $2 ($(podman image inspect -f '{{.Size}}' "$2" | awk '{printf "%.0f MB", $1/1e6}'))"
}
if [[ "${CONTAINERS_SKIP_BUILD:-}" == 1 ]]; then
  for image in convo-runner:0.1.0 convo-sandbox:0.1.0 convo-n8n:2.41.1; do podman image exists "$image" || { log "no image $image: run without CONTAINERS_SKIP_BUILD"; exit 1; }; done
  log "CONTAINERS_SKIP_BUILD=1: using the images as they are"
else
  timed build-runner build runner convo-runner:0.1.0
  timed build-sandbox build sandbox convo-sandbox:0.1.0
  timed build-n8n build n8n convo-n8n:2.41.1
fi

# --- the stack: compose.yaml as a user has it, with compose/init.sh's .env and secrets -------------
cp "$ROOT/compose.yaml" "$ROOT/.env.example" "$STACK/"
mkdir -p "$STACK/compose" && cp "$ROOT/compose/init.sh" "$STACK/compose/"
sh "$STACK/compose/init.sh" >&2 || { log "compose/init.sh failed"; exit 1; }
# Free ports instead of 5678/8080/4010, which may be taken on a shared machine.
sed -i -e "s/^N8N_PUBLISHED_PORT=.*/N8N_PUBLISHED_PORT=$(free_port)/" -e "s/^RUNNER_PUBLISHED_PORT=.*/RUNNER_PUBLISHED_PORT=$(free_port)/" \
  -e "s/^SANDBOX_PUBLISHED_PORT=.*/SANDBOX_PUBLISHED_PORT=$(free_port)/" "$STACK/.env"
# podman-compose 1.0.3 ignores --scale; replicas are what it reads.
printf 'services:\n  worker:\n    deploy:\n      replicas: 2\n' >"$STACK/compose.test.yaml"

t0=$(date +%s)
UP=1
compose up -d --no-build >"$STACK/up.log" 2>&1 || { tail -40 "$STACK/up.log" >&2; log "podman-compose up failed"; exit 1; }
TIMINGS+=("up $(( $(date +%s) - t0 ))s")
log "stack $PROJECT up: $(podman ps --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}' | xargs)"

node "$HERE/compose-check.mjs" "$STACK" "$PROJECT"
rc=$?
if (( rc != 0 )); then
  for name in $(podman ps -a --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}'); do
    podman logs --tail 15 "$name" >"$STACK/$name.log" 2>&1
  done
  log "logs of each container (last lines) in $STACK"
fi
exit $rc
