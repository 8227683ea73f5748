/* global fetch, setTimeout, setInterval, AbortSignal */
// `npm run dev`: a real n8n (the version the end-to-end suite pins) with this pack loaded from
// packages/n8n-nodes-convo/dist/, beside everything the examples talk to: a private Redis, the sandbox, the runner (its
// token generated), and a stub OpenAI-compatible model with a product feed. Creates the owner
// account, imports a credential for each service and the examples, prints the editor URL and the
// sign-in, and stops everything on Ctrl-C, SIGTERM or its parent's end. Each child runs in its own
// process group and is killed with it on exit, whatever the cause.
//
// State lives in .dev/ (git-ignored): n8n's database (workflows you build stay), Redis's
// append-only file, generated secrets (mode 600) and one log file per process in .dev/logs/.
// Env: DEV_DIR (default .dev), DEV_N8N_PORT (5678), DEV_SANDBOX_PORT (4010), DEV_RUNNER_PORT
// (8090): a busy port falls back to a free one, 0 always picks a free one; DEV_SKIP_BUILD=1 uses
// the pack's dist/ as it is; E2E_DIR where n8n is installed (default .e2e, shared with the e2e suite).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';

import { freePort } from '../freePort.mjs';
import { claimOwner, exampleFiles, localCredentials, prepareExample } from './n8n-setup.mjs';
import { startStubModel } from './stub-model.mjs';

const ROOT = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
const PACK_DIST = join(ROOT, 'packages', 'n8n-nodes-convo', 'dist');
const N8N_VERSION = '2.41.1';
const E2E = process.env.E2E_DIR ?? join(ROOT, '.e2e');
const NODE24_BIN = join(E2E, 'node24', 'node_modules', 'node', 'bin');
const N8N_BIN = join(E2E, 'n8n', 'node_modules', '.bin', 'n8n');
const DEV = process.env.DEV_DIR ?? join(ROOT, '.dev');
const LOGS = join(DEV, 'logs');
const STATE_FILE = join(DEV, 'state.json');
export const DEV_EMAIL = 'dev@convo-for-n8n.dev';
/** The runner's key prefix here; printed in the summary, since a CLI needs the same one to see its campaigns. */
const RUNNER_PREFIX = 'convo-dev';
/** Trigger examples published (active) on first import, so they react without a click. */
const PUBLISHED_EXAMPLES = [
	'reply-to-inbound-message.json',
	'campaign-finished-summary.json',
	'campaign-delivery-settled-followup.json',
];

const started = Date.now();
const say = (text) => console.log(`[dev +${Math.round((Date.now() - started) / 1000)}s] ${text}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const shown = (path) => relative(process.cwd(), path) || '.';

// --- children: each in its own process group, all killed on exit ---------------------------
/** Every process group started, in start order: { name, pid }. Written to .dev/pids.json. */
const groups = [];
let stopping;
let interrupted = false;

function recordGroups() {
	writeFileSync(
		join(DEV, 'pids.json'),
		JSON.stringify(
			groups.map(({ name, pid }) => ({ name, pid })),
			null,
			2,
		),
	);
}

function groupAlive(pid) {
	try {
		process.kill(-pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** Starts `command` in a process group of its own, output to .dev/logs/<name>.log. */
function startGroup(name, command, args, env) {
	// Ctrl-C while starting: nothing new may start once the stop began.
	if (interrupted) throw new Error('interrupted');
	const logPath = join(LOGS, `${name}.log`);
	const fd = openSync(logPath, 'a');
	const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', fd, fd] });
	closeSync(fd);
	const group = { name, pid: child.pid, child, logPath };
	group.exited = new Promise((resolve) => {
		child.once('exit', (code, signal) => resolve({ code, signal }));
		// A program that cannot start (not installed) never exits: say why instead.
		child.once('error', (error) => {
			group.error = error.code === 'ENOENT' ? `${command} is not installed (not on PATH)` : error.message;
			resolve({ code: 127, signal: null });
		});
	});
	if (child.pid !== undefined) {
		groups.push(group);
		recordGroups();
	}
	return group;
}

/** Runs a command to its end in its own process group; fails with the log's tail. */
async function runGroup(name, command, args, env) {
	const group = startGroup(name, command, args, env);
	const { code, signal } = await group.exited;
	if (group.pid !== undefined && groupAlive(group.pid)) process.kill(-group.pid, 'SIGKILL');
	if (code !== 0)
		throw new Error(`${name} failed (${group.error ?? signal ?? `exit ${code}`}):\n${tail(group.logPath)}`);
}

function tail(path, lines = 25) {
	try {
		return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
	} catch {
		return '(no log)';
	}
}

/**
 * Stops every group in two steps: first all that use Redis (last started first), then Redis, so
 * the runner's and n8n's own stop can still reach it (a runner whose Redis went first waits out
 * its shutdown deadline instead of stopping at once). SIGKILL to what is left after each step's
 * grace, then this waits for the killed groups' exit, so none is left unreaped when it exits.
 */
async function stopAll(graceMs = 15_000, redisGraceMs = 5_000) {
	stopping ??= (async () => {
		const isRedis = (group) => group.name === 'redis';
		const steps = [
			{ members: groups.filter((group) => !isRedis(group)), graceMs },
			{ members: groups.filter(isRedis), graceMs: redisGraceMs },
		];
		for (const { members, graceMs: grace } of steps) {
			for (const group of [...members].reverse()) if (groupAlive(group.pid)) process.kill(-group.pid, 'SIGTERM');
			const deadline = Date.now() + grace;
			while (members.some((group) => groupAlive(group.pid)) && Date.now() < deadline) await sleep(200);
			for (const group of members) if (groupAlive(group.pid)) process.kill(-group.pid, 'SIGKILL');
		}
		await Promise.race([Promise.all(groups.map((group) => group.exited)), sleep(2000)]);
	})();
	await stopping;
}

// --- small helpers ----------------------------------------------------------------------------
/** The wanted port if it is free (0: any free port); else a free one, said aloud. */
async function pickPort(what, wanted) {
	if (wanted === 0) return await freePort();
	const free = await new Promise((resolve) => {
		const server = createServer();
		server.once('error', () => resolve(false));
		server.listen(wanted, '127.0.0.1', () => server.close(() => resolve(true)));
	});
	if (free) return wanted;
	const other = await freePort();
	say(`port ${wanted} for ${what} is taken; using ${other}`);
	return other;
}

async function waitUntil(what, check, timeoutMs, group) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check().catch(() => undefined);
		if (value) return value;
		if (group && (group.error || !groupAlive(group.pid)))
			throw new Error(`${what}: ${group.error ?? `the process ended:\n${tail(group.logPath)}`}`);
		if (Date.now() > deadline)
			throw new Error(`${what}: not within ${timeoutMs / 1000} s${group ? `:\n${tail(group.logPath)}` : ''}`);
		await sleep(250);
	}
}

const answers = async (url, init) => (await fetch(url, { ...init, signal: AbortSignal.timeout(5000) })).ok;

function loadState() {
	const state = existsSync(STATE_FILE) ? JSON.parse(readFileSync(STATE_FILE, 'utf8')) : {};
	state.runnerToken ??= `dev-${randomBytes(24).toString('hex')}`;
	state.encryptionKey ??= randomBytes(24).toString('hex');
	// n8n wants 8+ characters with a digit and a capital letter.
	state.password ??= `Convo-${randomBytes(6).toString('hex')}-Dev1`;
	state.importedExamples ??= [];
	return state;
}

function saveState(state) {
	writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
	chmodSync(STATE_FILE, 0o600);
}

// --- the steps ----------------------------------------------------------------------------------
async function main() {
	mkdirSync(LOGS, { recursive: true });
	const state = loadState();
	saveState(state);
	const baseEnv = { ...process.env };
	for (const name of Object.keys(baseEnv)) if (/^npm_/i.test(name)) delete baseEnv[name];

	if (!existsSync(N8N_BIN) || !existsSync(join(E2E, 'n8n', `.installed-${N8N_VERSION}`))) {
		say(
			`installing Node 24 and n8n ${N8N_VERSION} into ${shown(E2E)}: first time only, 5 to 8 minutes, ` +
				`3 GB (progress in ${shown(join(LOGS, 'install-n8n.log'))})`,
		);
		await runGroup('install-n8n', 'bash', [join(ROOT, 'test', 'e2e', 'install-n8n.sh')], baseEnv);
	}
	if (process.env.DEV_SKIP_BUILD !== '1') {
		say(`building the node pack into ${shown(PACK_DIST)}`);
		await runGroup('build', 'npm', ['run', 'build', '-w', 'n8n-nodes-convo'], baseEnv);
	}
	if (!existsSync(join(PACK_DIST, 'nodes', 'Convo', 'Convo.node.js')))
		throw new Error(`${shown(PACK_DIST)} has no Convo node: run npm run build`);

	// Redis: private, on a free port, its data kept in .dev/redis between runs.
	const redisDir = join(DEV, 'redis');
	mkdirSync(redisDir, { recursive: true });
	const redisPort = await freePort();
	const redis = startGroup(
		'redis',
		'redis-server',
		[
			'--port',
			String(redisPort),
			'--bind',
			'127.0.0.1',
			'--dir',
			redisDir,
			'--save',
			'',
			'--appendonly',
			'yes',
			'--maxmemory-policy',
			'noeviction',
		],
		baseEnv,
	);
	const redisUrl = `redis://127.0.0.1:${redisPort}`;
	await waitUntil(
		'redis-server to accept connections',
		async () => /Ready to accept connections/.test(tail(redis.logPath, 200)),
		15_000,
		redis,
	);
	say(`Redis at ${redisUrl} (data in ${shown(redisDir)})`);

	const sandboxPort = await pickPort('the sandbox', Number(process.env.DEV_SANDBOX_PORT ?? 4010));
	const sandbox = startGroup(
		'sandbox',
		process.execPath,
		[join(ROOT, 'sandbox', 'bin', 'convo-sandbox.mjs'), '--port', String(sandboxPort)],
		baseEnv,
	);
	const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
	const fixture = await waitUntil(
		'the sandbox',
		async () => {
			const response = await fetch(`${sandboxUrl}/__sandbox/fixture`, { signal: AbortSignal.timeout(5000) });
			return response.ok ? await response.json() : undefined;
		},
		30_000,
		sandbox,
	);
	const business = fixture.businesses[0];
	say(`sandbox at ${sandboxUrl}, business "${business.name}"`);

	const runnerPort = await pickPort('the runner', Number(process.env.DEV_RUNNER_PORT ?? 8090));
	const runnerUrl = `http://127.0.0.1:${runnerPort}`;
	const runner = startGroup('runner', process.execPath, [join(ROOT, 'runner', 'bin', 'convo-runner.mjs'), 'start'], {
		...baseEnv,
		REDIS_URL: redisUrl,
		RUNNER_PREFIX,
		RUNNER_TOKEN: state.runnerToken,
		RUNNER_HTTP_HOST: '127.0.0.1',
		RUNNER_HTTP_PORT: String(runnerPort),
		CONVO_EXTERNAL_URL: fixture.externalUrl,
		CONVO_API_KEY: business.apiKey,
		// Delivery tracking through A1 (default schedule): a campaign settles at its +1 min checks.
		CONVO_BASE_URL: fixture.baseUrl,
		CONVO_ACCESS_TOKEN: business.accessToken,
		LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
		// n8n (webhook receiver) and the stub feed run on this machine: the operator's opt-in.
		RUNNER_ALLOW_PRIVATE_URLS: process.env.RUNNER_ALLOW_PRIVATE_URLS ?? 'true',
	});
	await waitUntil('the runner', () => answers(`${runnerUrl}/readyz`), 60_000, runner);
	say(`runner at ${runnerUrl}`);

	// The stub model and feed are served by this process itself: nothing to leave behind.
	const stub = await startStubModel({ port: 0 });
	say(`stub model at ${stub.url}/v1, product feed at ${stub.url}/feeds/products.ndjson`);

	// n8n: credentials re-imported on every start (the services' ports may change), examples once.
	const n8nPort = await pickPort('n8n', Number(process.env.DEV_N8N_PORT ?? 5678));
	const n8nEnv = {
		...baseEnv,
		PATH: `${NODE24_BIN}:${baseEnv.PATH}`,
		N8N_USER_FOLDER: join(DEV, 'n8n'),
		N8N_CUSTOM_EXTENSIONS: PACK_DIST,
		N8N_ENCRYPTION_KEY: state.encryptionKey,
		DB_TYPE: 'sqlite',
		N8N_PORT: String(n8nPort),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		N8N_EDITOR_BASE_URL: `http://127.0.0.1:${n8nPort}`,
		WEBHOOK_URL: `http://127.0.0.1:${n8nPort}/`,
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		N8N_RUNNERS_BROKER_PORT: String(await freePort()),
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'false',
		N8N_DISABLED_MODULES: 'mcp-registry',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_SECURE_COOKIE: 'false',
		N8N_BLOCK_ENV_ACCESS_IN_NODE: 'false',
		N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '10',
	};
	delete n8nEnv.NODE_OPTIONS;
	const importDir = join(DEV, 'import');
	mkdirSync(importDir, { recursive: true });
	const credentials = localCredentials(
		{ fixture, runner: { url: runnerUrl, token: state.runnerToken }, model: { url: stub.url } },
		'dev',
	);
	writeFileSync(join(importDir, 'credentials.json'), JSON.stringify(credentials, null, 2));
	chmodSync(join(importDir, 'credentials.json'), 0o600);
	await runGroup(
		'n8n-import',
		N8N_BIN,
		['import:credentials', `--input=${join(importDir, 'credentials.json')}`],
		n8nEnv,
	);
	// Examples not imported before (one `n8n` command for all: each start of n8n's CLI takes seconds).
	const fresh = exampleFiles().filter((file) => !state.importedExamples.includes(file));
	if (fresh.length > 0) {
		rmSync(join(importDir, 'workflows'), { recursive: true, force: true });
		mkdirSync(join(importDir, 'workflows'));
		const ids = {};
		for (const file of fresh) {
			const workflow = prepareExample(file, credentials, { feedUrl: `${stub.url}/feeds/products.ndjson` });
			ids[file] = workflow.id;
			writeFileSync(join(importDir, 'workflows', file), JSON.stringify(workflow, null, 2));
		}
		await runGroup(
			'n8n-import',
			N8N_BIN,
			['import:workflow', '--separate', `--input=${join(importDir, 'workflows')}`],
			n8nEnv,
		);
		for (const file of fresh.filter((name) => PUBLISHED_EXAMPLES.includes(name))) {
			await runGroup('n8n-import', N8N_BIN, ['publish:workflow', `--id=${ids[file]}`], n8nEnv);
		}
		state.importedExamples.push(...fresh);
		saveState(state);
	}
	say(
		`credentials imported (${credentials.length}); ` +
			`${fresh.length ? `examples imported: ${fresh.length}` : 'examples were imported before'}`,
	);

	const n8n = startGroup('n8n', N8N_BIN, ['start'], n8nEnv);
	const editorUrl = `http://127.0.0.1:${n8nPort}`;
	say(`starting n8n ${N8N_VERSION} (about 15 s)`);
	await waitUntil('n8n to be ready', () => answers(`${editorUrl}/healthz/readiness`), 180_000, n8n);

	if (!state.ownerCreated) {
		const claimed = await claimOwner(editorUrl, {
			email: DEV_EMAIL,
			lastName: 'Developer',
			password: state.password,
		}).catch((error) => error);
		if (claimed !== 'claimed') {
			throw new Error(
				`${claimed === 'already' ? 'n8n has an owner account this run did not create' : claimed.message}; ` +
					`remove ${shown(DEV)} to start over`,
			);
		}
		state.ownerCreated = true;
		saveState(state);
	}

	// The reply example's trigger gets the sandbox's message_created deliveries (the sandbox
	// forgets registrations when it stops, so this is done on every start).
	const reply = prepareExample('reply-to-inbound-message.json', credentials);
	const trigger = reply.nodes.find((node) => node.type === 'CUSTOM.convoTrigger');
	await fetch(`${sandboxUrl}/__sandbox/webhooks`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({
			business: business.id,
			url: `${editorUrl}/webhook/${trigger.webhookId}/convo`,
			method: 'POST',
		}),
	});

	console.log(`
Convo dev environment is running. Ctrl-C stops everything.
  n8n editor   ${editorUrl}
  sign in      ${DEV_EMAIL}  /  ${state.password}
  sandbox      ${sandboxUrl}   (ids, tokens and keys: ${sandboxUrl}/__sandbox/fixture)
  runner       ${runnerUrl}   (console and API; sign in with the runner token, which this prints:)
  token        node -p 'JSON.parse(require("fs").readFileSync(${JSON.stringify(shown(STATE_FILE))})).runnerToken'
  stub model   ${stub.url}/v1   (the "OpenAI stub model" credential; no key needed)
  logs         ${shown(LOGS)}/
The CLI against this runner (its Redis and key prefix; any convo-runner command):
  REDIS_URL=${redisUrl} RUNNER_PREFIX=${RUNNER_PREFIX} npx convo-runner campaign list
Try it: an inbound message from Ada starts "Convo: reply to an inbound message":
  curl -s -X POST ${sandboxUrl}/__sandbox/inbound -H 'content-type: application/json' \\
    -d '{"business":"${business.id}","from":"+4915112340001","text":"Where is my order?"}'
`);
	say('ready');

	// Runs until Ctrl-C, or until one of the services dies (then everything stops).
	const died = await Promise.race(
		groups
			.filter((group) => [redis, sandbox, runner, n8n].includes(group))
			.map(async (group) => ({ group, ...(await group.exited) })),
	);
	if (!stopping) {
		say(
			`${died.group.name} stopped (${died.signal ?? `exit ${died.code}`}); ` +
				`stopping the rest. Last lines of ${shown(died.group.logPath)}:\n${tail(died.group.logPath)}`,
		);
		await stub.close();
		await stopAll();
		process.exit(1);
	}
}

/** Stops everything once, whatever asked: a signal, or the parent gone. */
function stopOn(reason) {
	if (interrupted) return;
	interrupted = true;
	say(
		`${reason}: stopping ${
			groups
				.filter((group) => groupAlive(group.pid))
				.map((group) => group.name)
				.join(', ') || 'nothing'
		}`,
	);
	void stopAll().then(() => {
		say('stopped');
		process.exit(0);
	});
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stopOn(signal));
// The parent gone (npm, an IDE or a process manager killed without passing a signal on): this
// process is re-parented, and its services must not outlive the session that started them.
// package.json's `exec` makes npm itself the parent, so killing npm is seen here.
const parent = process.ppid;
setInterval(() => {
	if (process.ppid !== parent) stopOn(`the parent process (${parent}) went away`);
}, 500).unref();
// A crash of this script must not leave children behind either.
process.on('exit', () => {
	for (const group of groups) if (groupAlive(group.pid)) process.kill(-group.pid, 'SIGKILL');
});

main().catch(async (error) => {
	if (interrupted) return;
	console.error(`[dev] ${error instanceof Error ? error.message : String(error)}`);
	await stopAll();
	process.exit(1);
});
