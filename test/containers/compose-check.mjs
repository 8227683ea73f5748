/* global fetch, setTimeout, AbortSignal, URLSearchParams */
// The checks of compose-test.sh, against the compose stack it brought up (demo profile, two
// workers), through the published ports only, as a user reaches them:
//   healthy    every container's healthcheck passes (`podman healthcheck run`: no systemd here)
//   exposure   the published ports answer on 127.0.0.1 and on none of the machine's other addresses
//              (a TCP connect, nothing sent); Redis refuses a client without its password
//              (NOAUTH) and n8n's container cannot reach it at all; n8n's owner is claimed
//              already: a new setup is refused, the credentials compose/init.sh printed sign in
//   funnel     the demo runner tracks delivery through the messaging API: a campaign the sandbox
//              delivers (and nobody reads) shows every recipient delivered
//   campaign   2,000 recipients (and 3 invalid rows) at a rate bound; the runner container
//              SIGKILLed mid-campaign and started again; unknowns reconciled and retried; the
//              sandbox's own log: every valid recipient exactly one message, the invalid none; the
//              sends of the three runner processes together within the bound in every second;
//              the workers kept sending while `start` was dead
//   console    the console in Chromium: sign in with the token, the campaign listed as completed
//   n8n        the demo's credentials imported into n8n and each passing n8n's credential test;
//              n8n in its container has the pack and runs a Convo node workflow (created and
//              activated through n8n's public API, started by its webhook) against the sandbox
//   sigterm    a worker stops on SIGTERM with exit code 0, well before podman would SIGKILL it
// Prints one line per check and a timing per phase; exits non-zero on any failure.
//
//   node test/containers/compose-check.mjs <stackDir> <project>
// Reads <stackDir>/.env (the published ports), <stackDir>/secrets/ (the runner token) and
// <stackDir>/init.out (what compose/init.sh printed: n8n's owner account).
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { chromium } from 'playwright-core';

const [stackDir, project] = process.argv.slice(2);
if (!stackDir || !project) {
	console.error('usage: compose-check.mjs <stackDir> <project>');
	process.exit(2);
}
const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const env = Object.fromEntries(
	readFileSync(join(stackDir, '.env'), 'utf8')
		.split('\n')
		.filter((line) => /^[A-Z][A-Z0-9_]*=/.test(line))
		.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);
const token = readFileSync(join(stackDir, 'secrets', 'runner_token'), 'utf8').trim();
/** n8n's owner as compose/init.sh printed it: "n8n's owner account (...): EMAIL / PASSWORD". */
const printedOwner = /^n8n's owner account[^:]*: (\S+) \/ (\S+)$/m.exec(
	readFileSync(join(stackDir, 'init.out'), 'utf8'),
);
const RUNNER = `http://127.0.0.1:${env.RUNNER_PUBLISHED_PORT}`;
const SANDBOX = `http://127.0.0.1:${env.SANDBOX_PUBLISHED_PORT}`;
const N8N = `http://127.0.0.1:${env.N8N_PUBLISHED_PORT}`;
const container = (service, number = 1) => `${project}_${service}_${number}`;
const SHOTS = join(new URL('../..', import.meta.url).pathname, '.tmp');

const RECIPIENTS = 2000;
const RATE = 100;
/** The rate tests' bound (test/runner/rate.test.ts): the limit plus 10% and 2. */
const BOUND = Math.floor(RATE * 1.1) + 2;

const results = [];
const timings = [];
async function phase(name, fn) {
	const started = Date.now();
	try {
		await fn();
	} catch (error) {
		results.push({ name: `${name}: ${error instanceof Error ? error.message : String(error)}`, ok: false });
		console.log(`  FAIL ${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
	}
	const seconds = ((Date.now() - started) / 1000).toFixed(1);
	timings.push(`${name} ${seconds}s`);
	console.log(`[containers] phase ${name}: ${seconds}s`);
}
function check(name, ok, detail = '') {
	results.push({ name, ok });
	console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${name}${ok || !detail ? '' : `: ${detail}`}`);
	return ok;
}
async function waitFor(what, probe, timeoutMs, everyMs = 500) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe().catch(() => undefined);
		if (value !== undefined && value !== false) return value;
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
		await sleep(everyMs);
	}
}
const podman = async (...args) => (await run('podman', args, { timeout: 120_000 })).stdout.trim();
const healthy = async (name) =>
	run('podman', ['healthcheck', 'run', name], { timeout: 30_000 }).then(
		() => true,
		() => false,
	);

async function http(base, method, path, { body, headers = {}, raw } = {}) {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: { ...headers, ...(body !== undefined && !raw ? { 'content-type': 'application/json' } : {}) },
		body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
		signal: AbortSignal.timeout(60_000),
	});
	const text = await response.text();
	let json;
	try {
		json = JSON.parse(text);
	} catch {
		json = text;
	}
	return { status: response.status, json, headers: response.headers };
}
const runner = (method, path, options = {}) =>
	http(RUNNER, method, path, { ...options, headers: { authorization: `Bearer ${token}`, ...options.headers } });
const sandboxMessages = async () => (await http(SANDBOX, 'GET', '/__sandbox/messages')).json;

/** Whether a TCP connection to host:port opens within `ms` (nothing is sent on it). */
function opens(host, port, ms = 3000) {
	return new Promise((resolve) => {
		const socket = connect({ host, port });
		const done = (result) => {
			socket.destroy();
			resolve(result);
		};
		socket.setTimeout(ms, () => done(false));
		socket.once('connect', () => done(true));
		socket.once('error', () => done(false));
	});
}

/** The most sends in any window [t, t + 1000 ms). */
function maxPerSecond(times) {
	const sorted = [...times].sort((a, b) => a - b);
	let most = 0;
	for (let end = 0, start = 0; end < sorted.length; end++) {
		while (sorted[end] - sorted[start] >= 1000) start++;
		most = Math.max(most, end - start + 1);
	}
	return most;
}

let fixture;
let campaignId;

await phase('healthy', async () => {
	for (const service of ['redis', 'sandbox', 'runner']) {
		const name = container(service);
		await waitFor(`${name} to be healthy`, () => healthy(name), 180_000, 1000);
		check(`podman healthcheck run ${name} passes`, true);
	}
	for (const number of [1, 2]) {
		const state = await podman('inspect', '-f', '{{.State.Running}}', container('worker', number)).catch((error) =>
			String(error.message),
		);
		check(`worker ${number} of 2 runs (${container('worker', number)})`, state === 'true', state);
	}
	const ready = await waitFor(
		'the runner to be ready (/readyz: Redis answers, workers run)',
		async () => ((await http(RUNNER, 'GET', '/readyz')).status === 200 ? true : undefined),
		60_000,
		500,
	).catch(() => false);
	check('the runner answers /readyz on its published port (Redis reached, workers running)', ready);
	fixture = (await http(SANDBOX, 'GET', '/__sandbox/fixture')).json;
	check('the sandbox answers its fixture on its published port', Boolean(fixture?.businesses?.length));
	const unauthenticated = await http(RUNNER, 'GET', '/api/campaigns');
	check(
		'the control API refuses a request without the token',
		unauthenticated.status === 401,
		String(unauthenticated.status),
	);
});

let n8nCookie;

await phase('exposure', async () => {
	// n8n listens only once it has started (a minute on a busy machine): a port that does not
	// answer yet would pass the other addresses' checks for the wrong reason.
	await waitFor(
		'n8n to be ready',
		async () => (await http(N8N, 'GET', '/healthz/readiness')).status === 200,
		180_000,
		1000,
	);
	const published = {
		n8n: env.N8N_PUBLISHED_PORT,
		runner: env.RUNNER_PUBLISHED_PORT,
		sandbox: env.SANDBOX_PUBLISHED_PORT,
	};
	const others = (await run('hostname', ['-I'])).stdout
		.split(/\s+/)
		.filter((address) => address && !/^127\./.test(address) && address !== '::1');
	check(`the machine has addresses other than loopback to try (${others.join(', ')})`, others.length > 0);
	for (const [service, port] of Object.entries(published)) {
		check(`${service}'s published port ${port} answers on 127.0.0.1`, await opens('127.0.0.1', Number(port)));
		const answering = [];
		for (const address of others) if (await opens(address, Number(port))) answering.push(address);
		check(
			`${service}'s published port ${port} answers on none of the machine's other addresses`,
			answering.length === 0,
			`answers on ${answering.join(', ')}`,
		);
	}

	const unauthenticated = await podman('exec', container('redis'), 'redis-cli', 'ping').catch((error) =>
		String(error.stdout ?? error.message),
	);
	check('Redis refuses a client without the password (NOAUTH)', /NOAUTH/.test(unauthenticated), unauthenticated);
	const fromN8n = await podman(
		'exec',
		container('n8n'),
		'node',
		'-e',
		`const s=require('net').connect(6379,'redis');s.on('connect',()=>{console.log('connected');process.exit(0)});s.on('error',(e)=>{console.log(e.code);process.exit(0)});setTimeout(()=>{console.log('timeout');process.exit(0)},5000)`,
	).catch((error) => String(error.message));
	check("n8n's container cannot reach Redis (not on its network)", fromN8n !== 'connected', fromN8n);
	const ready = await http(RUNNER, 'GET', '/readyz');
	check(
		'the runner reaches Redis with the password of secrets/redis_url (/readyz)',
		ready.status === 200,
		`${ready.status} ${JSON.stringify(ready.json).slice(0, 200)}`,
	);

	// The one-shot n8n-owner claims the owner once n8n answers; the first visitor comes after it.
	const claimedBy = await run('podman', ['wait', container('n8n-owner')], { timeout: 120_000 }).then(
		(out) => out.stdout.trim(),
		(error) => String(error.message),
	);
	check('the one-shot n8n-owner exited 0', claimedBy === '0', claimedBy);
	const intruder = await http(N8N, 'POST', '/rest/owner/setup', {
		body: {
			email: 'first-visitor@example.com',
			firstName: 'First',
			lastName: 'Visitor',
			password: 'Intruder-2024-Owner1',
		},
	});
	check(
		"n8n refuses a first visitor's owner setup: the owner is claimed already",
		intruder.status !== 200,
		`${intruder.status} ${JSON.stringify(intruder.json).slice(0, 200)}`,
	);
	if (!check("compose/init.sh printed n8n's owner account", Boolean(printedOwner))) return;
	const [, email, password] = printedOwner;
	const login = await http(N8N, 'POST', '/rest/login', { body: { emailOrLdapLoginId: email, password } });
	check(
		'n8n: the owner account compose/init.sh printed signs in',
		login.status === 200,
		`${login.status} ${JSON.stringify(login.json).slice(0, 200)}`,
	);
	if (login.status === 200)
		n8nCookie = login.headers
			.getSetCookie()
			.map((c) => c.split(';')[0])
			.join('; ');
});

await phase('funnel', async () => {
	const business = fixture.businesses[0];
	const template = business.templates.find((t) => t.variables.join() === '1,2' && t.buttons.length === 0);
	// Every message delivered, none read: only the messaging API tells delivered from sent (the
	// conversations' view shows DELIVERED from the send on, and READ would count as delivered).
	await http(SANDBOX, 'POST', '/__sandbox/delivery', {
		body: { seed: 'compose', delivered: 1, read: 0, delays_ms: { sent: 200, delivered: 500 } },
	});
	const phones = Array.from({ length: 10 }, (_, i) => `4917029${String(i).padStart(6, '0')}`);
	const csv = ['phone,1,2', ...phones.map((phone, i) => `+${phone},Reader ${i},order ${i}`)].join('\n');
	const query = new URLSearchParams({
		template_id: template.id,
		from: business.phoneNumbers[1] ?? business.phoneNumbers[0],
		rate: '20',
	});
	const created = await runner('POST', `/api/campaigns?${query}`, {
		raw: `${csv}\n`,
		headers: { 'content-type': 'text/csv' },
	});
	if (
		!check(
			'a 10-recipient campaign is created for the funnel',
			created.status === 201,
			`${created.status} ${JSON.stringify(created.json).slice(0, 300)}`,
		)
	)
		return;
	// The settings hold for sends accepted while they are set: kept until the last send.
	await waitFor(
		'the funnel campaign to complete',
		async () => (await runner('GET', `/api/campaigns/${created.json.id}`)).json?.state === 'completed',
		60_000,
		250,
	).finally(() => http(SANDBOX, 'DELETE', '/__sandbox/delivery'));
	let last;
	const funnel = await waitFor(
		'the funnel to show every recipient delivered',
		async () => {
			last = (await runner('GET', `/api/campaigns/${created.json.id}`)).json?.funnel;
			return last?.delivered === phones.length ? last : undefined;
		},
		60_000,
		500,
	).catch(() => undefined);
	check(
		`the demo's funnel shows delivered (${phones.length} of ${phones.length}), tracked through the messaging API`,
		funnel?.tracking === 'messaging_api' && funnel.delivered === phones.length,
		JSON.stringify(last),
	);
});

await phase('campaign', async () => {
	const business = fixture.businesses[0];
	const template = business.templates.find((t) => t.variables.join() === '1,2' && t.buttons.length === 0);
	const from = business.phoneNumbers[0];
	// Latency keeps sends in flight when the runner container is killed.
	await http(SANDBOX, 'POST', '/__sandbox/faults', {
		body: { endpoint: 'POST /api/external/v2/send-template', latencyMs: 80 },
	});
	const phones = Array.from({ length: RECIPIENTS }, (_, i) => `4917019${String(i).padStart(6, '0')}`);
	const invalid = ['not-a-phone', '12', '+49 abc 123'];
	const csv = [
		'phone,1,2',
		...phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`),
		...invalid.map((phone) => `${phone},Nobody,none`),
	].join('\n');
	const query = new URLSearchParams({ template_id: template.id, from, rate: String(RATE) });
	const created = await runner('POST', `/api/campaigns?${query}`, {
		raw: `${csv}\n`,
		headers: { 'content-type': 'text/csv' },
	});
	if (
		!check(
			'the campaign is created through the published API (CSV upload)',
			created.status === 201,
			`${created.status} ${JSON.stringify(created.json).slice(0, 300)}`,
		)
	)
		return;
	campaignId = created.json.id;
	check(
		`the ${invalid.length} invalid rows are rejected at create`,
		created.json.rejections?.length === invalid.length,
		JSON.stringify(created.json.rejections),
	);
	const mine = async () => (await sandboxMessages()).filter((m) => m.source === 'template' && phones.includes(m.to));

	await waitFor('500 sends before the kill', async () => (await mine()).length >= 500, 120_000, 100);
	const startedBefore = await podman('inspect', '-f', '{{.State.StartedAt}}', container('runner'));
	const killedAt = Date.now();
	await podman('kill', '-s', 'KILL', container('runner'));
	const atKill = (await mine()).length;
	check(
		`podman kill -s KILL ${container('runner')} mid-campaign (${atKill} of ${RECIPIENTS} sent)`,
		atKill < RECIPIENTS,
		String(atKill),
	);
	const exited = await waitFor(
		'the runner container to be down',
		async () =>
			(await podman('inspect', '-f', '{{.State.Running}}', container('runner'))) === 'false' ? true : undefined,
		30_000,
		200,
	).catch(() => false);
	check('the killed runner container is down (podman does not restart a killed container)', exited === true);
	// While `start` is dead, the two workers go on sending on their own; then it is started again.
	const whileDown = await waitFor(
		'100 more sends while the runner is down',
		async () => {
			const count = (await mine()).length;
			return count >= Math.min(atKill + 100, RECIPIENTS) ? count : undefined;
		},
		60_000,
		100,
	).catch(() => undefined);
	const stillDown = (await podman('inspect', '-f', '{{.State.Running}}', container('runner'))) === 'false';
	check(
		`the workers kept sending while start was down (${atKill} -> ${whileDown ?? '?'} sends)`,
		whileDown !== undefined && stillDown,
		`still down: ${stillDown}`,
	);
	await podman('start', container('runner'));
	await waitFor('the restarted runner to be healthy', () => healthy(container('runner')), 120_000, 1000);
	await waitFor(
		'the restarted runner to be ready',
		async () => ((await http(RUNNER, 'GET', '/readyz')).status === 200 ? true : undefined),
		60_000,
		500,
	);
	const restartedAt = Date.now();
	const startedAfter = await podman('inspect', '-f', '{{.State.StartedAt}}', container('runner'));
	check(
		'the runner container was killed and started again, and is healthy',
		startedAfter !== startedBefore,
		`${startedBefore} / ${startedAfter}`,
	);

	// Left claimed by the killed process: BullMQ hands its jobs to another process after its lock
	// expires (about 30 s); its claimed sends become unknown, resolved from the service's records.
	const terminal = (view) =>
		view.counts.pending + view.counts.claimed === 0 &&
		['completed', 'failed', 'cancelled', 'paused'].includes(view.state);
	let view = await waitFor(
		'the campaign to finish after the kill',
		async () => {
			const answer = await runner('GET', `/api/campaigns/${campaignId}`);
			return answer.status === 200 && terminal(answer.json) ? answer.json : undefined;
		},
		240_000,
		1000,
	);
	const unknownAfterKill = view.counts.unknown;
	if (view.counts.unknown > 0) {
		const reconciled = await runner('POST', `/api/campaigns/${campaignId}/reconcile`);
		check(
			`reconcile resolves the ${unknownAfterKill} unknown sends from the service's records`,
			reconciled.status === 200 && reconciled.json.still_unknown === 0,
			JSON.stringify(reconciled.json),
		);
		if (reconciled.json.not_sent > 0) {
			const retried = await runner('POST', `/api/campaigns/${campaignId}/retry-not-sent`);
			check(
				'retry-not-sent requeues the recipients proven not sent',
				retried.status === 200 && retried.json.requeued === reconciled.json.not_sent,
				JSON.stringify(retried.json),
			);
		}
		view = await waitFor(
			'the campaign to complete',
			async () => {
				const answer = await runner('GET', `/api/campaigns/${campaignId}`);
				return answer.json?.state === 'completed' && answer.json.counts.pending + answer.json.counts.claimed === 0
					? answer.json
					: undefined;
			},
			240_000,
			1000,
		);
	}
	check(
		'the campaign completed with every valid recipient sent',
		view.state === 'completed' && view.counts.sent === RECIPIENTS,
		JSON.stringify(view.counts),
	);
	console.log(`    counts ${JSON.stringify(view.counts)}; unknown right after the kill: ${unknownAfterKill}`);

	const sends = await mine();
	const byPhone = new Map();
	for (const message of sends) byPhone.set(message.to, (byPhone.get(message.to) ?? 0) + 1);
	const duplicates = [...byPhone].filter(([, count]) => count > 1);
	const missing = phones.filter((phone) => !byPhone.has(phone));
	check(
		`the sandbox's log: each of the ${RECIPIENTS} valid recipients got exactly one message`,
		sends.length === RECIPIENTS && duplicates.length === 0 && missing.length === 0,
		`${sends.length} messages, ${duplicates.length} duplicated, ${missing.length} missing: ${JSON.stringify(duplicates.slice(0, 5))}`,
	);
	const invalidSends = (await sandboxMessages()).filter((m) =>
		invalid.some((phone) => m.to === phone.replace(/\D/g, '')),
	);
	check('the invalid rows got no message', invalidSends.length === 0, JSON.stringify(invalidSends.slice(0, 3)));

	// The rate: the service's arrival times of this number's sends (before the injected latency).
	const times = sends.map((m) => Date.parse(m.request?.receivedAt ?? m.createdAt));
	const most = maxPerSecond(times);
	check(
		`one number's rate is shared by start and 2 workers: at most ${most} sends in any second (bound ${BOUND} for ${RATE}/s)`,
		most <= BOUND,
		String(most),
	);
	check(
		'the rate was the bound, not something far slower (more than half of it in some second)',
		most > RATE / 2,
		String(most),
	);
	const whileDead = times.filter((time) => time > killedAt && time < restartedAt).length;
	console.log(
		`    ${whileDead} sends arrived in the ${((restartedAt - killedAt) / 1000).toFixed(1)} s between the kill and the restart`,
	);
	await http(SANDBOX, 'DELETE', '/__sandbox/faults');
});

await phase('console', async () => {
	mkdirSync(SHOTS, { recursive: true });
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
		args: [
			'--headless',
			'--no-sandbox',
			'--disable-gpu',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
	});
	try {
		const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
		await page.goto(`${RUNNER}/`);
		await page.waitForURL(`${RUNNER}/login`);
		await page.getByTestId('token').fill(token);
		await page.getByTestId('sign-in').click();
		await page.waitForURL(`${RUNNER}/`);
		const row = page.getByTestId('campaign-row').filter({ hasText: campaignId ?? 'no campaign' });
		await row.first().waitFor({ timeout: 30_000 });
		const text = await row.first().textContent();
		check(
			'the console, signed in with the token in Chromium, lists the campaign as completed',
			/completed/.test(text ?? ''),
			text ?? '',
		);
		await page.screenshot({ path: join(SHOTS, 'containers-console.png') });
	} finally {
		await browser.close();
	}
});

await phase('n8n', async () => {
	// What the Dockerfile put there; the workflow below proves n8n loaded it.
	const listed = await podman(
		'exec',
		container('n8n'),
		'sh',
		'-c',
		'ls "$N8N_CUSTOM_EXTENSIONS/dist/nodes/Convo"',
	).catch((error) => String(error.message));
	check(
		'the n8n container holds the built pack where N8N_CUSTOM_EXTENSIONS points',
		listed.includes('Convo.node.js'),
		listed,
	);
	// Signed in as the owner compose/init.sh printed (phase exposure).
	if (!check('n8n: signed in as the owner', Boolean(n8nCookie))) return;
	const cookie = n8nCookie;
	const rest = (method, path, body) =>
		http(N8N, method, path, { body, headers: { cookie, 'browser-id': 'compose-test' } });
	const scopes = (await rest('GET', '/rest/api-keys/scopes')).json.data;
	const key = await rest('POST', '/rest/api-keys', { label: 'compose test', scopes, expiresAt: null });
	const apiKey = key.json.data?.rawApiKey ?? key.json.data?.apiKey;
	if (!check('n8n: an API key is created', Boolean(apiKey), `${key.status} ${JSON.stringify(key.json).slice(0, 200)}`))
		return;
	const api = (method, path, body) =>
		http(N8N, method, `/api/v1${path}`, { body, headers: { 'x-n8n-api-key': apiKey } });

	// The demo profile's one-shot imported the credentials of the sandbox and the runner.
	const imported = await run('podman', ['wait', container('n8n-demo-credentials')], { timeout: 300_000 }).then(
		(out) => out.stdout.trim(),
		(error) => String(error.message),
	);
	check(
		'the demo profile imported its credentials into n8n (n8n-demo-credentials exited 0)',
		imported === '0',
		imported,
	);
	const credentials = (await rest('GET', '/rest/credentials')).json.data ?? [];
	const types = credentials.map((c) => c.type).sort();
	check(
		'n8n lists the demo credentials: Convo API, Convo External API, Convo Runner API',
		['convoApi', 'convoExternalApi', 'convoRunnerApi'].every((type) => types.includes(type)),
		JSON.stringify(types),
	);
	// As the editor's Test button does: the credential as the editor holds it, then /test.
	for (const type of ['convoApi', 'convoExternalApi', 'convoRunnerApi']) {
		const found = credentials.find((c) => c.type === type);
		if (!found) continue;
		const full = (await rest('GET', `/rest/credentials/${found.id}?includeData=true`)).json.data;
		const tested = await rest('POST', '/rest/credentials/test', {
			credentials: { id: full.id, name: full.name, type: full.type, data: full.data },
		});
		check(
			`n8n's credential test passes for ${type} (reaches ${type === 'convoRunnerApi' ? 'the runner' : 'the sandbox'} container)`,
			tested.json.data?.status === 'OK',
			JSON.stringify(tested.json).slice(0, 300),
		);
	}

	const business = fixture.businesses[0];
	const ada = business.contacts.find((contact) => contact.name === 'Ada Lovelace');
	const template = business.templates.find((t) => t.variables.join() === '1,2' && t.buttons.length === 0);
	// The demo's imported credential, as a user picks it in the editor.
	const credential = { json: credentials.find((c) => c.type === 'convoExternalApi') };
	if (!credential.json) return;
	const path = `convo-compose-${Date.now()}`;
	const workflow = await api('POST', '/workflows', {
		name: 'Compose test: send a Convo template',
		nodes: [
			{
				id: 'a0000000-0000-4000-8000-000000000001',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: 'a0000000-0000-4000-8000-0000000000aa',
				parameters: { httpMethod: 'POST', path, responseMode: 'lastNode' },
			},
			{
				id: 'a0000000-0000-4000-8000-000000000002',
				name: 'Send order update',
				// A custom extension's types are CUSTOM.<node> (N8N_CUSTOM_EXTENSIONS, runner/Dockerfile).
				type: 'CUSTOM.convo',
				typeVersion: 1,
				position: [240, 0],
				parameters: {
					resource: 'template',
					operation: 'send',
					templateId: { __rl: true, mode: 'id', value: template.id },
					fromPhoneNumber: business.phoneNumbers[0],
					phone: ada.phoneNumber,
					variables: {
						variable: [
							{ name: '1', value: 'Ada' },
							{ name: '2', value: 'COMPOSE-1' },
						],
					},
				},
				credentials: { convoExternalApi: { id: credential.json.id, name: credential.json.name } },
			},
		],
		connections: { Webhook: { main: [[{ node: 'Send order update', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	});
	if (
		!check(
			'n8n public API: a workflow with the Convo node is created',
			workflow.status === 200,
			`${workflow.status} ${JSON.stringify(workflow.json).slice(0, 300)}`,
		)
	)
		return;
	const activated = await api('POST', `/workflows/${workflow.json.id}/activate`);
	if (
		!check(
			'n8n public API: the workflow is activated',
			activated.status === 200,
			`${activated.status} ${JSON.stringify(activated.json).slice(0, 300)}`,
		)
	)
		return;
	const before = (await sandboxMessages()).filter(
		(m) => m.source === 'template' && m.to === ada.phoneNumber.replace(/\D/g, ''),
	).length;
	const called = await waitFor(
		'the webhook to be registered',
		async () => {
			const answer = await http(N8N, 'POST', `/webhook/${path}`, { body: {} });
			return answer.status === 404 ? undefined : answer;
		},
		30_000,
		1000,
	);
	const sent = await sandboxMessages();
	const toAda = sent.filter((m) => m.source === 'template' && m.to === ada.phoneNumber.replace(/\D/g, ''));
	const answered = JSON.stringify(called.json);
	check(
		'the workflow ran in n8n: the Convo node sent the template to the sandbox container, once',
		called.status === 200 && toAda.length === before + 1 && answered.includes(toAda.at(-1)?.uuid ?? 'none'),
		`${called.status} ${answered.slice(0, 300)}; ${toAda.length - before} new message(s)`,
	);
	const executions = await api('GET', `/executions?workflowId=${workflow.json.id}`);
	const statuses = (executions.json.data ?? []).map((e) => e.status);
	check('n8n public API: the execution is listed as a success', statuses.includes('success'), JSON.stringify(statuses));
});

await phase('sigterm', async () => {
	const name = container('worker', 2);
	const started = Date.now();
	await podman('stop', '-t', '30', name);
	const seconds = (Date.now() - started) / 1000;
	const code = await podman('inspect', '-f', '{{.State.ExitCode}}', name);
	check(
		`a worker stops on SIGTERM (podman stop) with exit code 0, in ${seconds.toFixed(1)} s (podman would SIGKILL at 30 s)`,
		code === '0' && seconds < 25,
		`exit ${code} after ${seconds.toFixed(1)} s`,
	);
});

const failed = results.filter((r) => !r.ok).length;
console.log(`[containers] phases: ${timings.join(', ')}`);
console.log(`containers: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
