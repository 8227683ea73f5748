/**
 * Production configuration (#19), against the real bin: `start` and `worker` need REDIS_URL (or
 * `start --dev-redis`, a throwaway redis-server); Redis's `appendonly` is checked at start (a JSON
 * warning, or a refusal with RUNNER_REQUIRE_AOF=true, before any worker takes a job); every secret
 * can come from `<NAME>_FILE`, and its content never reaches the log; stderr holds only JSON lines.
 * What a runner did is counted in the sandbox's own log.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import pino from 'pino';

import { ConfigError, loadConfig, SECRET_SETTINGS } from '../../runner/src/config';
import { createLogger } from '../../runner/src/log';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../runner/src/devRedis';
import { checkRedis, connect } from '../../runner/src/redis';
import { closeContext, openContext } from '../../runner/src/runtime';
import {
	clientCount,
	positionalTemplate,
	runCli,
	sendThroughApi,
	spawnRunner,
	startRedisCluster,
	startSandboxProcess,
	templateSends,
	uniquePrefix,
	waitFor,
	waitForClientsAtMost,
	type SpawnedRunner,
	apiUrlOf,
} from './support';

jest.setTimeout(120_000);

let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
let dir: string;
const running: SpawnedRunner[] = [];
const redises: PrivateRedis[] = [];

beforeAll(async () => {
	sandbox = await startSandboxProcess();
	dir = mkdtempSync(join(tmpdir(), 'convo-prodconfig-'));
});
afterAll(async () => {
	await Promise.all(running.map((runner) => runner.kill('SIGKILL')));
	await Promise.all(redises.map((redis) => redis.stop()));
	await sandbox?.close();
	rmSync(dir, { recursive: true, force: true });
});

const business = () => sandbox.fixture.businesses[0];

/** What a process needs but Redis: no REDIS_URL, no secret in the parent's environment. */
const baseEnv = (): NodeJS.ProcessEnv => ({
	PATH: process.env.PATH,
	HOME: process.env.HOME,
	LOG_LEVEL: 'info',
	RUNNER_PREFIX: uniquePrefix(),
	CONVO_EXTERNAL_URL: sandbox.externalUrl,
	CONVO_API_KEY: business().apiKey,
});

function spawn(args: string[], env: NodeJS.ProcessEnv): SpawnedRunner {
	const runner = spawnRunner(args, env);
	running.push(runner);
	return runner;
}

async function ownRedis(args: string[]): Promise<PrivateRedis> {
	const redis = await startPrivateRedis(args);
	redises.push(redis);
	return redis;
}

/** The process's pino lines (stderr and stdout are read together: the runner writes nothing to stdout). */
function jsonLines(output: string): Array<Record<string, unknown>> {
	return output
		.split('\n')
		.filter((line) => line.startsWith('{'))
		.map((line) => JSON.parse(line) as Record<string, unknown>);
}

function secretFile(name: string, content: string): string {
	const path = join(dir, name);
	writeFileSync(path, content, { mode: 0o600 });
	return path;
}

/** The exit code within `ms` (after `signal`, when given), or 'still running' (then it is killed). */
async function exitWithin(
	runner: SpawnedRunner,
	ms: number,
	signal?: NodeJS.Signals,
): Promise<number | null | 'still running'> {
	if (signal) runner.child.kill(signal);
	let timer: NodeJS.Timeout | undefined;
	const code = await Promise.race([
		runner.exited,
		new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms))),
	]);
	clearTimeout(timer);
	if (code === 'still running') await runner.kill('SIGKILL');
	return code;
}

test('start and worker without REDIS_URL stop at once naming it, and say how to get a throwaway Redis', async () => {
	for (const role of ['start', 'worker']) {
		const runner = spawn([role], baseEnv());
		expect({ role, code: await exitWithin(runner, 30_000) }).toEqual({ role, code: 1 });
		expect(runner.output()).toMatch(
			/^convo-runner: REDIS_URL must be set to the Redis the runner keeps its campaigns in/m,
		);
		expect(runner.output()).toContain('convo-runner start --dev-redis');
	}
	// The flag is a throwaway Redis instead of REDIS_URL, never beside it.
	const both = spawn(['start', '--dev-redis'], { ...baseEnv(), REDIS_URL: 'redis://127.0.0.1:1' });
	expect(await exitWithin(both, 30_000)).toBe(1);
	expect(both.output()).toContain('--dev-redis starts a throwaway Redis, but REDIS_URL is set too');
});

test('start --dev-redis: a throwaway redis-server, announced, that sends, and ends with the process', async () => {
	const token = 'dev-redis-token-0123456789';
	const runner = spawn(['start', '--dev-redis'], { ...baseEnv(), RUNNER_TOKEN: token, RUNNER_HTTP_PORT: '0' });
	const base = await apiUrlOf(runner);
	const announced = /--dev-redis: a throwaway redis-server at redis:\/\/127\.0\.0\.1:(\d+), with NO persistence/.exec(
		runner.output(),
	);
	expect(announced).not.toBeNull();

	const phones = ['+4917088000001', '+4917088000002'];
	const created = await fetch(`${base}/api/campaigns`, {
		method: 'POST',
		headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			template_id: positionalTemplate(business()).id,
			from: business().phoneNumbers[0],
			recipients: phones.map((phone) => ({ phone, 1: 'a', 2: 'b' })),
		}),
	});
	expect(created.status).toBe(201);
	await waitFor(
		'the sandbox to receive both sends',
		async () => (await templateSends(sandbox)).filter((message) => phones.includes(`+${message.to}`)).length === 2,
		30_000,
	);

	expect(await exitWithin(runner, 30_000, 'SIGTERM')).toBe(0);
	const redisPort = Number(announced?.[1]);
	const refused = await new Promise<boolean>((resolve) => {
		const socket = connectTcp(redisPort, '127.0.0.1');
		socket.once('connect', () => (socket.destroy(), resolve(false)));
		socket.once('error', () => resolve(true));
	});
	expect(refused).toBe(true);
});

test('appendonly no: one JSON warning at start saying what it risks and how to fix it; the worker still runs', async () => {
	const redis = await ownRedis(['--appendonly', 'no']);
	const worker = spawn(['worker'], { ...baseEnv(), REDIS_URL: redis.url });
	await waitFor(
		`the worker to start (${worker.output()})`,
		async () => /"msg":"runner started"/.test(worker.output()),
		30_000,
	);
	const warnings = jsonLines(worker.output()).filter((line) => line.appendonly === 'no');
	expect(warnings).toEqual([
		expect.objectContaining({
			level: 40,
			msg: expect.stringMatching(
				/runs with appendonly no: a Redis restart or crash loses the ledger .* sent again .* never-twice and never-lost guarantees/,
			),
			fix: expect.stringContaining('appendonly yes'),
			strict: expect.stringContaining('RUNNER_REQUIRE_AOF=true'),
		}),
	]);
});

test('RUNNER_REQUIRE_AOF=true with appendonly no: start refuses, naming the setting, before any worker takes a job', async () => {
	const redis = await ownRedis(['--appendonly', 'no']);
	const env = { ...baseEnv(), REDIS_URL: redis.url };
	const context = await openContext(loadConfig(env), createLogger('silent'), { withService: false });
	try {
		// A job waiting in the control queue: any worker of this prefix takes it at once.
		const job = await context.queues.control.add('feed', {});
		const clientsBefore = await clientCount(context.redis);
		const runner = spawn(['start'], { ...env, RUNNER_REQUIRE_AOF: 'true', RUNNER_HTTP_PORT: '0' });
		expect(await exitWithin(runner, 30_000)).toBe(1);
		expect(runner.output()).toMatch(
			/^convo-runner: RUNNER_REQUIRE_AOF is true and Redis at 127\.0\.0\.1:\d+ runs with appendonly no/m,
		);
		// Whatever the process sent Redis before it exited has run once Redis has let its connections go: then look.
		await waitForClientsAtMost(context.redis, clientsBefore);
		expect(await job.getState()).toBe('waiting');
		expect(await context.queues.control.getJobSchedulers()).toEqual([]);
	} finally {
		await closeContext(context);
	}
	const wrong = spawn(['worker'], { ...env, RUNNER_REQUIRE_AOF: 'yes' });
	expect(await exitWithin(wrong, 30_000)).toBe(1);
	expect(wrong.output()).toContain('RUNNER_REQUIRE_AOF must be true or false');
});

test('start before its Redis is up: /healthz answers 200 at once, /readyz 503 with the reason, then 200 once Redis is there; stderr JSON only', async () => {
	const redisPort = await freePort();
	const runner = spawn(['start'], {
		...baseEnv(),
		REDIS_URL: `redis://127.0.0.1:${redisPort}`,
		RUNNER_TOKEN: 'early-token-0123456789',
		RUNNER_HTTP_PORT: '0',
	});
	const base = await apiUrlOf(runner, '/healthz');
	const early = await fetch(`${base}/readyz`);
	expect({ status: early.status, body: await early.json() }).toEqual({
		status: 503,
		body: { status: 'unavailable', reason: 'Redis does not answer' },
	});
	expect(runner.output()).not.toContain('"msg":"runner started"');

	const redis = await startPrivateRedis(['--appendonly', 'yes'], undefined, redisPort);
	redises.push(redis);
	await waitFor(
		'/readyz to answer 200',
		async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
		30_000,
	);
	const lines = runner
		.output()
		.split('\n')
		.filter((line) => line.length > 0);
	expect(lines.filter((line) => !line.startsWith('{'))).toEqual([]);
	expect(jsonLines(runner.output())).toContainEqual(expect.objectContaining({ msg: 'runner started' }));
});

test('on a Redis Cluster every master is checked: one warning naming the three, and RUNNER_REQUIRE_AOF refuses', async () => {
	const cluster = await startRedisCluster(3);
	const connection = connect({ clusterNodes: cluster.nodes });
	const lines: string[] = [];
	const log = pino(
		{ level: 'info' },
		new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }),
	);
	try {
		await checkRedis(connection, log);
		const warnings = lines
			.map((line) => JSON.parse(line) as { appendonly?: string; msg: string })
			.filter((line) => line.appendonly === 'no');
		expect(warnings).toHaveLength(1);
		expect(warnings[0].msg.match(/127\.0\.0\.1:\d+/g)?.sort()).toEqual(cluster.nodes.split(',').sort());
		await expect(checkRedis(connection, log, { requireAof: true })).rejects.toThrow(
			/^RUNNER_REQUIRE_AOF is true and Redis at .* runs with appendonly no/,
		);
	} finally {
		connection.disconnect();
		await cluster.stop();
	}
});

test('appendonly yes, secrets from files (REDIS_URL_FILE with a password, RUNNER_TOKEN_FILE, CONVO_API_KEY_FILE): no warning, the API takes the file token, the key reaches the sandbox, stderr is JSON only, no secret in it', async () => {
	const password = 'redis-pass-w0rd-7f3a';
	const redis = await ownRedis(['--appendonly', 'yes', '--requirepass', password]);
	const redisUrl = redis.url.replace('redis://', `redis://:${password}@`);
	const token = 'file-token-0123456789abcdef';
	const { CONVO_API_KEY: apiKey, ...env } = baseEnv();
	const runner = spawn(['start'], {
		...env,
		REDIS_URL_FILE: secretFile('redis-url', `${redisUrl}\n`),
		RUNNER_TOKEN_FILE: secretFile('token', `${token}\n`),
		CONVO_API_KEY_FILE: secretFile('api-key', `${apiKey}\n`),
		RUNNER_HTTP_PORT: '0',
		RUNNER_REQUIRE_AOF: 'true',
	});
	const base = await apiUrlOf(runner);
	// The sandbox accepts a send only with the business's key: three sends prove the file's key reached it.
	await sendThroughApi(runner, base, token, sandbox, ['+4917088000011', '+4917088000012', '+4917088000013']);
	expect((await fetch(`${base}/api/campaigns`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
	expect((await fetch(`${base}/api/campaigns`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);

	const output = runner.output();
	const lines = output.split('\n').filter((line) => line.length > 0);
	expect(lines.filter((line) => !line.startsWith('{'))).toEqual([]);
	const logged = jsonLines(output);
	// The one warning is the wrong token's, asked for above.
	expect(logged.filter((line) => Number(line.level) >= 40).map((line) => line.msg)).toEqual(['authentication failed']);
	expect(logged).toContainEqual(
		expect.objectContaining({ level: 30, appendonly: 'yes', msg: 'Redis keeps an append-only file' }),
	);
	for (const [name, secret] of Object.entries({ token, apiKey, password }))
		expect({ name, leaked: output.includes(String(secret)) }).toEqual({ name, leaked: false });
});

test('the CLI reads the same files: REDIS_URL_FILE and CONVO_API_KEY_FILE work for campaign list', async () => {
	const redis = await ownRedis(['--appendonly', 'no']);
	const result = await runCli(
		['campaign', 'list', '--json'],
		{
			...baseEnv(),
			CONVO_API_KEY: undefined,
			CONVO_API_KEY_FILE: secretFile('cli-key', business().apiKey),
			REDIS_URL_FILE: secretFile('cli-redis', redis.url),
		},
		30_000,
	);
	expect({ code: result.code, answer: JSON.parse(result.stdout) }).toEqual({
		code: 0,
		answer: { campaigns: [], schedules: [], total: 0, offset: 0, count: 0 },
	});
});

test('X and X_FILE both set, or X_FILE unreadable: an error naming them and the reason, never the content', async () => {
	const content = 'content-that-must-not-show-0123456789';
	const file = secretFile('both', content);
	// Every secret setting, in-process: one rule, one place (config.ts).
	for (const name of SECRET_SETTINGS) {
		const value = name === 'REDIS_URL' ? 'redis://:env-value-0123456789@127.0.0.1:6390' : 'env-value-0123456789abcdef';
		// A Cluster's password goes with the Cluster's nodes, or is refused on its own (cluster-auth.test.ts).
		const companion = name === 'REDIS_CLUSTER_PASSWORD' ? { REDIS_CLUSTER_NODES: '127.0.0.1:7000' } : {};
		expect(() => loadConfig({ ...companion, [name]: value, [`${name}_FILE`]: file })).toThrow(
			new ConfigError(
				`The runner's environment is not valid:\n  ${name} and ${name}_FILE are both set: set only one (${name}_FILE names a file holding the value)`,
			),
		);
		expect(() => loadConfig({ ...companion, [`${name}_FILE`]: join(dir, 'missing') })).toThrow(
			`${name}_FILE names a file that cannot be read (${join(dir, 'missing')}): ENOENT: no such file or directory`,
		);
		expect(loadConfig({ ...companion, [`${name}_FILE`]: secretFile(`ok-${name}`, `${value}\r\n`) })[name]).toBe(value);
	}
	// A value read from a file that breaks its rule is named with the file it came from.
	expect(() => loadConfig({ RUNNER_TOKEN_FILE: secretFile('short', 'short\n') })).toThrow(
		'RUNNER_TOKEN (read from RUNNER_TOKEN_FILE) must be at least 16 characters',
	);

	// And through the real bin, for a worker and for the CLI.
	const both = spawn(['worker'], {
		...baseEnv(),
		REDIS_URL: 'redis://127.0.0.1:1',
		RUNNER_TOKEN: 'env-token-0123456789',
		RUNNER_TOKEN_FILE: file,
	});
	expect(await exitWithin(both, 30_000)).toBe(1);
	expect(both.output()).toContain('RUNNER_TOKEN and RUNNER_TOKEN_FILE are both set');
	const missing = spawn(['start'], {
		...baseEnv(),
		CONVO_API_KEY: undefined,
		CONVO_API_KEY_FILE: join(dir, 'no-such-key'),
		REDIS_URL: 'redis://127.0.0.1:1',
	});
	expect(await exitWithin(missing, 30_000)).toBe(1);
	expect(missing.output()).toContain(
		`CONVO_API_KEY_FILE names a file that cannot be read (${join(dir, 'no-such-key')}): ENOENT: no such file or directory`,
	);
	const unreadable = await runCli(['campaign', 'list', '--json'], { ...baseEnv(), REDIS_URL_FILE: dir }, 30_000);
	expect(unreadable.code).toBe(1);
	expect(JSON.parse(unreadable.stdout).error).toContain(
		`REDIS_URL_FILE names a file that cannot be read (${dir}): EISDIR`,
	);
	for (const text of [both.output(), missing.output(), unreadable.stdout + unreadable.stderr])
		expect(text).not.toContain(content);
});

test('every secret setting is written [secret] by the log, as a field and inside a logged object', () => {
	const lines: string[] = [];
	const log = createLogger('info', 'convo-runner', {
		destination: new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }),
	});
	for (const name of SECRET_SETTINGS) {
		const value = `value-of-${name.toLowerCase()}-0123456789`;
		log.info({ [name]: value, config: { [name]: value } }, 'a line');
		const line = JSON.parse(lines.at(-1) ?? '{}') as Record<string, unknown>;
		expect({ name, top: line[name], nested: (line.config as Record<string, unknown>)[name] }).toEqual({
			name,
			top: '[secret]',
			nested: '[secret]',
		});
	}
});
