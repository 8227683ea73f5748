#!/bin/sh
# Once, before the first `docker compose up` (README, "Run it with Docker Compose"): writes what
# compose.yaml reads and git never holds. Keeps whatever already exists; run it again safely.
#   .env                        settings, from .env.example
#   secrets/runner_token        the control API's and the console's token (random)
#   secrets/runner_webhook_key  the key webhook signing secrets derive from (random)
#   secrets/convo_api_key       the Convo external API key: the demo sandbox's business "Acme Coffee"
#                               until you write your real key into it
#   secrets/convo_access_token  the messaging API's access token (delivery tracking): the sandbox's
#                               "Acme Coffee" until you write your real token into it
#   secrets/redis_url           the runner's Redis URL, with a random password Redis asks for
#   secrets/n8n_owner_password  the password of n8n's owner account (N8N_OWNER_EMAIL in .env),
#                               claimed at the stack's first start; printed below
# secrets/ is readable by you alone; its files are mode 644 because Compose bind-mounts each one
# into the containers, which run as the user `node` (uid 1000), not as you.
set -eu
cd "$(dirname "$0")/.."
umask 077
[ -f .env ] || { cp .env.example .env; echo "wrote .env (from .env.example)"; }
mkdir -p secrets
chmod 700 secrets
random() { od -An -tx1 -N"${1:-24}" /dev/urandom | tr -d ' \n'; }
write() { # name value
  [ -s "secrets/$1" ] && return 0
  printf '%s\n' "$2" >"secrets/$1"
  chmod 644 "secrets/$1"
  echo "wrote secrets/$1"
}
write runner_token "$(random)"
write runner_webhook_key "$(random)"
write redis_url "redis://:$(random)@redis:6379"
# n8n wants a digit and a capital letter.
write n8n_owner_password "Convo-$(random 12)-Owner1"
# The sandbox's keys are fixed (the same on every start): its first business's is
# live_sbx_ + the first 32 hex digits of sha256("convo-sandbox-secret:b0:apikey") (sandbox/src/ids.ts).
write convo_api_key "live_sbx_$(printf 'convo-sandbox-secret:b0:apikey' | sha256sum | cut -c1-32)"
write convo_access_token "sbx_at_$(printf 'convo-sandbox-secret:b0:token' | sha256sum | cut -c1-32)"
echo "The console's sign-in token: secrets/runner_token"
owner=$(sed -n 's/^N8N_OWNER_EMAIL=//p' .env | tail -n 1)
echo "n8n's owner account (claimed when the stack first starts):" \
	"${owner:-owner@example.com} / $(cat secrets/n8n_owner_password)"
