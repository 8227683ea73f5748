#!/usr/bin/env bash
# The container test (`npm run test:containers`): builds the three images of runner/Dockerfile
# with podman, brings compose.yaml up with podman-compose by the containers guide's own commands (docs/guide/containers.md) (its first
# block under "Run it with Docker Compose", `docker compose` read as `podman-compose`: all services,
# as the demo profile does; its .env given free ports, WORKER_REPLICAS=2 and delivery checks 2 s after
# each send before `up`), runs compose-check.mjs against the published ports,
# then takes the stack down (also on failure or interrupt) and checks that no container of it is left.
#
# Needs: root on Debian 12, `bash ../shared/containers/base-images.sh --with-n8n` run once (the
# base images under their official names, podman's configuration), node, /usr/bin/chromium.
# What the test works around, and only here (compose.yaml stays what a Docker user runs):
#   - podman-compose 1.0.3 knows no profiles (it starts every service, the demo's sandbox too; the
#     guide's COMPOSE_PROFILES=demo is for Docker Compose) and takes the project's name from the
#     folder: the stack's folder is named after the project;
#   - it does not wait for `depends_on: condition: service_healthy`: the check waits for health;
#   - no systemd here, so healthchecks never run by themselves: `podman healthcheck run NAME`.
# Env: CONTAINERS_KEEP=1 leaves the stack up (inspect it, then `podman-compose down -v` in its folder);
#      CONTAINERS_SKIP_BUILD=1 uses the three images as they are (iterating on the checks);
#      CONTAINERS_BUILD_ONLY=1 builds the three images and stops (CI builds them early, in the
#      background; the test's own build then finds every layer in podman's cache).
#      CONTAINERS_BASE_IMAGES=path/to/base-images.sh where ../shared is not beside the checkout.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/test/containers"
START=$(date +%s)
log() { echo "[containers +$(( $(date +%s) - START ))s] $*" >&2; }
PROJECT="convotest$$"
STACK_PARENT="$(mktemp -d "${TMPDIR:-/tmp}/convo-compose.XXXXXX")"
STACK="$STACK_PARENT/$PROJECT"
mkdir "$STACK"
UP=0
TIMINGS=()
timed() { local name="$1" t0; shift; t0=$(date +%s); "$@"; local rc=$?; TIMINGS+=("$name $(( $(date +%s) - t0 ))s"); return $rc; }

# Machines with no container registry (these): base-images.sh's local stand-ins and podman settings.
# Elsewhere (a GitHub runner): podman's defaults, pulling the official images.
BASE_IMAGES="${CONTAINERS_BASE_IMAGES:-$ROOT/../shared/containers/base-images.sh}"
if [[ -f "$BASE_IMAGES" ]]; then
  # shellcheck disable=SC1090
  source "$(bash "$BASE_IMAGES" --env)" || { echo "run bash ../shared/containers/base-images.sh --with-n8n first" >&2; exit 1; }
else
  export PODMAN_BUILD_ARGS="--format docker"
fi
compose() { (cd "$STACK" && podman-compose "$@"); }

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
    podman network ls -q | grep "^${PROJECT}_" | xargs -r podman network rm -f >/dev/null 2>&1
  fi
  TIMINGS+=("total $(( $(date +%s) - START ))s")
  log "timings: ${TIMINGS[*]}"
  [[ $rc -eq 0 ]] && rm -rf "$STACK_PARENT" || log "stack folder kept: $STACK"
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
if [[ "${CONTAINERS_BUILD_ONLY:-}" == 1 ]]; then
  log "CONTAINERS_BUILD_ONLY=1: the images are built, the stack is not brought up"
  exit 0
fi

# --- the stack: compose.yaml as a user has it, brought up by the containers guide's commands-------------
cp "$ROOT/compose.yaml" "$ROOT/.env.example" "$STACK/"
mkdir -p "$STACK/compose" && cp "$ROOT/compose/init.sh" "$STACK/compose/"
# The guide's commands, comments and blank lines dropped.
mapfile -t COMMANDS < <(awk '/^# Run it with Docker Compose/ { section = 1; next } section && /^##? / { exit }
  section && /^```bash/ { block = 1; next } block && /^```/ { exit } block' "$ROOT/docs/guide/containers.md" | sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d')
printf '%s\n' "${COMMANDS[@]}" | grep -q 'compose/init.sh' && printf '%s\n' "${COMMANDS[@]}" | grep -q 'docker compose up -d' \
  || { log "the containers guide's first bash block has no init.sh and docker compose up -d: ${COMMANDS[*]}"; exit 1; }
t0=$(date +%s)
for command in "${COMMANDS[@]}"; do
  command="${command//docker compose/podman-compose}"
  if [[ $command == *podman-compose\ up* ]]; then
    # Before the stack starts: free ports instead of 5678/8080/4010 (which may be taken on a
    # shared machine), two workers, and delivery checks 2 s after each send (phase funnel).
    sed -i -e "s/^N8N_PUBLISHED_PORT=.*/N8N_PUBLISHED_PORT=$(free_port)/" -e "s/^RUNNER_PUBLISHED_PORT=.*/RUNNER_PUBLISHED_PORT=$(free_port)/" \
      -e "s/^SANDBOX_PUBLISHED_PORT=.*/SANDBOX_PUBLISHED_PORT=$(free_port)/" -e "s/^WORKER_REPLICAS=.*/WORKER_REPLICAS=2/" \
      -e "s/^RUNNER_TRACKING_SCHEDULE=.*/RUNNER_TRACKING_SCHEDULE=2s,10m,1h,24h/" "$STACK/.env"
    UP=1
  fi
  log "guide: $command"
  (cd "$STACK" && bash -c "$command") >>"$STACK/readme-commands.log" 2>&1 || { tail -40 "$STACK/readme-commands.log" >&2; log "the guide's \`$command\` failed"; exit 1; }
  [[ $command == *compose/init.sh* ]] && cp "$STACK/readme-commands.log" "$STACK/init.out"
done
(( UP )) || { log "the guide's commands started no stack"; exit 1; }
TIMINGS+=("readme-commands $(( $(date +%s) - t0 ))s")
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
