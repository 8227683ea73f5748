#!/usr/bin/env bash
# The node pack's folder alone, as a clone of that folder gets it (and as n8n's verification finds
# it: the package root named n8n-nodes-convo): the files git knows under packages/n8n-nodes-convo,
# copied into a temporary folder outside the repository, `npm install` there from the pack's own
# package.json, then n8n's tooling as it is: `n8n-node lint`, `n8n-node build`, `n8n-node
# cloud-support`. An import that reaches outside the folder (the rest of the repository, a
# workspace package) fails the build here, since nothing outside is there.
#   bash scripts/check-pack-alone.sh        (CI: .ci/run; needs the npm registry)
# Env: PACK_ALONE_KEEP=1 keeps the copy.
# --ignore-scripts: eslint-plugin-n8n-nodes-base (under @n8n/node-cli) has a preinstall that
# demands pnpm, and nothing the pack uses needs an install script. --prefer-offline: npm takes
# package metadata from its cache when it has it (the root's `npm ci` filled it), so the install
# resolves the pack's package.json alone, as a fresh clone would, without asking the registry
# again for what it already knows.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PACK=packages/n8n-nodes-convo
WORK="$(mktemp -d "${TMPDIR:-/tmp}/convo-pack-alone.XXXXXX")"
[[ "${PACK_ALONE_KEEP:-}" == 1 ]] || trap 'rm -rf "$WORK"' EXIT
DIR="$WORK/n8n-nodes-convo"
mkdir -p "$DIR"

fail() { echo "check-pack-alone: $*" >&2; exit 1; }
strip() { sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' | tr '\r' '\n'; }

# Tracked files and untracked ones not ignored (uncommitted work is checked as it is); never dist/ or
# node_modules/, which a clone does not have.
(cd "$ROOT/$PACK" && git ls-files -co --exclude-standard -z .) |
	(cd "$ROOT/$PACK" && tar --null -cf - -T -) |
	tar -xf - -C "$DIR"
[[ -f "$DIR/package.json" && ! -e "$DIR/dist" && ! -e "$DIR/node_modules" ]] ||
	fail "the copy in $DIR is not the pack's folder alone"
echo "check-pack-alone: copied $(find "$DIR" -type f | wc -l) files of $PACK into $DIR"
cd "$DIR"

t0=$SECONDS
npm install --no-audit --no-fund --prefer-offline --ignore-scripts </dev/null
echo "check-pack-alone: npm install in $((SECONDS - t0))s"

# n8n-node's exit status decides; its output (spinners and colours stripped) is shown on failure.
n8n_node() {
	if ! npx --no-install n8n-node "$@" </dev/null >"$WORK/n8n-node.log" 2>&1; then
		strip <"$WORK/n8n-node.log" | grep -v 'Building TypeScript files' >&2
		fail "n8n-node $* failed in the pack's folder alone"
	fi
}

t0=$SECONDS
n8n_node lint
echo "check-pack-alone: n8n-node lint passed in $((SECONDS - t0))s"

t0=$SECONDS
n8n_node build
for file in $(node -p "const { n8n } = require('./package.json'); [...n8n.nodes, ...n8n.credentials].join(' ')"); do
	[[ -f "$file" ]] || fail "n8n-node build did not produce $file"
done
echo "check-pack-alone: n8n-node build produced every file package.json's n8n section names in $((SECONDS - t0))s"

n8n_node cloud-support
if ! strip <"$WORK/n8n-node.log" | grep -q 'Status: eligible'; then
	strip <"$WORK/n8n-node.log" >&2
	fail "n8n-node cloud-support does not report the pack eligible"
fi
echo "check-pack-alone: n8n-node cloud-support: eligible"
