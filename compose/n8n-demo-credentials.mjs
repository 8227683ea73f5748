/* global fetch, setTimeout, AbortSignal */
// The demo profile's one-shot (service n8n-demo-credentials, in the n8n image): once n8n and the
// sandbox answer, imports into n8n the credentials of the demo's services as n8n reaches them on
// the compose network, so the editor has them ready: Convo API and Convo External API (the
// sandbox's first business), Convo Runner API (the runner and its token) and a webhook header
// credential. `npm run dev` imports the same ones (scripts/dev/n8n-setup.mjs, copied beside this
// file); fixed ids, so a second run updates them instead of adding more.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { localCredentials } from './n8n-setup.mjs';

const SANDBOX = process.env.DEMO_SANDBOX_URL ?? 'http://sandbox:4010';
const RUNNER = process.env.DEMO_RUNNER_URL ?? 'http://runner:8080';
const N8N = process.env.DEMO_N8N_URL ?? 'http://n8n:5678';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, probe, timeoutMs = 300_000) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe().catch(() => undefined);
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`${what} did not answer within ${timeoutMs / 1000} s`);
		await sleep(1000);
	}
}

const fixture = await waitFor(`the sandbox (${SANDBOX})`, async () => {
	const response = await fetch(`${SANDBOX}/__sandbox/fixture`, { signal: AbortSignal.timeout(5000) });
	return response.ok ? await response.json() : undefined;
});
// n8n ready: its database migrated and its encryption key written to the shared volume.
await waitFor(
	`n8n (${N8N})`,
	async () => (await fetch(`${N8N}/healthz/readiness`, { signal: AbortSignal.timeout(5000) })).ok,
);
const token = readFileSync(process.env.RUNNER_TOKEN_FILE ?? '/run/secrets/runner_token', 'utf8').trim();
const credentials = localCredentials(
	{
		fixture: { ...fixture, baseUrl: SANDBOX, externalUrl: `${SANDBOX}/api/external/v2` },
		runner: { url: RUNNER, token },
	},
	'demo',
);
const dir = mkdtempSync(join(tmpdir(), 'convo-demo-'));
try {
	const file = join(dir, 'credentials.json');
	writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
	execFileSync('n8n', ['import:credentials', `--input=${file}`], { stdio: 'inherit' });
} finally {
	rmSync(dir, { recursive: true, force: true });
}
console.log(`imported ${credentials.length} credentials for the demo: ${credentials.map((c) => c.name).join('; ')}`);
