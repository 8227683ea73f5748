/* global fetch, setTimeout, AbortSignal */
// The stack's one-shot n8n-owner (in the n8n image): once n8n answers, claims its owner account
// with N8N_OWNER_EMAIL and the password of N8N_OWNER_PASSWORD_FILE (compose/init.sh writes and
// prints it), so whoever reaches n8n first finds the setup done. `npm run dev` claims its owner
// the same way (claimOwner, scripts/dev/n8n-setup.mjs, copied beside this file). The password is
// never printed here: the container's log says only who owns n8n.
import { readFileSync } from 'node:fs';

import { claimOwner } from './n8n-setup.mjs';

const N8N = process.env.N8N_INTERNAL_URL ?? 'http://n8n:5678';
const WAIT_MS = Number(process.env.N8N_OWNER_WAIT_MS ?? 300_000);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const email = process.env.N8N_OWNER_EMAIL;
const passwordFile = process.env.N8N_OWNER_PASSWORD_FILE ?? '/run/secrets/n8n_owner_password';
if (!email) throw new Error("N8N_OWNER_EMAIL must be set: the email of n8n's owner account");
const password = readFileSync(passwordFile, 'utf8').replace(/[\r\n]+$/, '');
if (!/^(?=.*\d)(?=.*[A-Z]).{8,64}$/.test(password)) {
	throw new Error(
		`N8N_OWNER_PASSWORD_FILE (${passwordFile}) must hold 8 to 64 characters ` +
			"with a digit and a capital letter (n8n's rule)",
	);
}

const deadline = Date.now() + WAIT_MS;
for (;;) {
	const ready = await fetch(`${N8N}/healthz/readiness`, { signal: AbortSignal.timeout(5000) }).then(
		(response) => response.ok,
		() => false,
	);
	if (ready) break;
	if (Date.now() > deadline) throw new Error(`n8n (${N8N}) did not answer within ${WAIT_MS / 1000} s`);
	await sleep(500);
}
// Readiness can answer before n8n's REST routes do (a 404 or a reset in the first seconds), so the
// claim is tried again until the same deadline; only n8n's own "already set up" ends it early.
let claimed;
for (;;) {
	try {
		claimed = await claimOwner(N8N, { email, password });
		break;
	} catch (error) {
		if (Date.now() > deadline) throw error;
		console.log(`n8n's owner setup did not answer yet (${error.message.slice(0, 120)}); trying again`);
		await sleep(1000);
	}
}
console.log(
	claimed === 'claimed'
		? `n8n's owner account is ${email} (password: secrets/n8n_owner_password)`
		: 'n8n already has its owner account: left as it is',
);
