// @serial: kills and restarts Redis under the runner, and measures how soon it answers and stops
/**
 * Redis unreachable, against real processes: the CLI reports it as its one JSON error and exits 1
 * within a few seconds; a running `convo-runner start` answers its API with 503 at once while a
 * real redis-server is stopped, 200 again (and sends again) once it is back, and SIGTERM during an
 * outage ends the process within RUNNER_SHUTDOWN_DEADLINE. Also the start order: a setting that
 * cannot work stops the process before any worker takes a job.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadConfig } from '../../runner/src/config';
import { createLogger } from '../../runner/src/log';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../runner/src/devRedis';
import { closeContext, openContext } from '../../runner/src/runtime';
import {
	clientCount,
	positionalTemplate,
	runCli,
	spawnRunner,
	startSandboxProcess,
	templateSends,
	uniquePrefix,
	waitFor,
	waitForClientsAtMost,
	type SpawnedRunner,
} from './support';

jest.setTimeout(120_000);

const TOKEN = 'outage-token-0123456789abc';
/** As production runs Redis: what was written before the outage is there after it. */
const PERSISTENT = ['--appendonly', 'yes', '--appendfsync', 'always'];
/** The promise's value, or 'still running' after `ms` (the timer cleared either way). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still running'> {
	let timer: NodeJS.Timeout | undefined;
	const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)));
	try {
		return await Promise.race([promise, late]);
	} finally {
		clearTimeout(timer);
	}
}

const baseEnv = () => ({ PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info' });

test('the CLI against an unreachable Redis prints { "error" } naming it and exits 1 within a few seconds', async () => {
	// What the process needs to start at all (tsx, module loading) on this machine right now: on a
	// loaded CI machine that alone took 5 s, so the wait for Redis is timed beyond it.
	const startupStarted = Date.now();
	const help = await runCli(['campaign', 'list', '--help'], baseEnv(), 20_000);
	const startupMs = Date.now() - startupStarted;
	expect(help.code).toBe(0);
	const started = Date.now();
	const result = await runCli(
		['campaign', 'list', '--json'],
		{ ...baseEnv(), REDIS_URL: 'redis://user:pass-word-x1@127.0.0.1:1' },
		30_000,
	);
	const ms = Date.now() - started;
	expect(result.code).toBe(1);
	expect(JSON.parse(result.stdout)).toEqual({
		error: expect.stringMatching(/^Redis at 127\.0\.0\.1:1 does not answer within 3 s/),
	});
	// The client's 3 s ready wait, then the answer: not the 5 s command timeout or a retry loop on top.
	expect(ms - startupMs).toBeLessThan(6000);
	expect(result.stdout + result.stderr).not.toContain('pass-word-x1');
});

describe('a running start while its Redis stops and comes back', () => {
	let dir: string;
	let port: number;
	let redis: PrivateRedis | undefined;
	let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
	let runner: SpawnedRunner | undefined;
	let base = '';

	beforeAll(async () => {
		dir = mkdtempSync(join(tmpdir(), 'convo-outage-'));
		port = await freePort();
		redis = await startPrivateRedis(PERSISTENT, dir, port);
		sandbox = await startSandboxProcess();
	});
	afterAll(async () => {
		await runner?.kill('SIGKILL');
		await redis?.stop();
		await sandbox?.close();
		rmSync(dir, { recursive: true, force: true });
	});

	const call = async (path: string, init: RequestInit = {}) => {
		const started = Date.now();
		const response = await fetch(`${base}${path}`, {
			...init,
			headers: { authorization: `Bearer ${TOKEN}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
			signal: AbortSignal.timeout(15_000),
		});
		return {
			status: response.status,
			json: (await response.json()) as Record<string, unknown>,
			retryAfter: response.headers.get('retry-after'),
			ms: Date.now() - started,
		};
	};

	/** A fresh `start` against the running Redis, answering on a port of its own. */
	const startRunner = async () => {
		await runner?.kill('SIGKILL');
		const business = sandbox.fixture.businesses[0];
		const httpPort = await freePort();
		runner = spawnRunner(['start'], {
			...baseEnv(),
			REDIS_URL: redis?.url,
			RUNNER_PREFIX: uniquePrefix(),
			CONVO_EXTERNAL_URL: sandbox.externalUrl,
			CONVO_API_KEY: business.apiKey,
			RUNNER_TOKEN: TOKEN,
			RUNNER_HTTP_PORT: String(httpPort),
			RUNNER_SHUTDOWN_DEADLINE: '5s',
		});
		base = `http://127.0.0.1:${httpPort}`;
		await waitFor(
			'the API to be ready',
			async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.ok,
			30_000,
		);
		return runner;
	};

	test('the API answers 503 within a few seconds while Redis is down, then 200, and the workers send again once it is back', async () => {
		const business = sandbox.fixture.businesses[0];
		await startRunner();
		expect((await call('/api/campaigns')).status).toBe(200);

		await redis?.stop();
		for (const path of ['/api/campaigns', '/api/campaigns/cnope', '/api/webhooks']) {
			const answer = await call(path);
			expect({ path, status: answer.status, message: answer.json.message }).toEqual({
				path,
				status: 503,
				message: expect.stringContaining('Redis'),
			});
			expect(answer.retryAfter).toBe('5');
			expect(answer.ms).toBeLessThan(3000);
		}
		const create = await call('/api/campaigns', {
			method: 'POST',
			body: JSON.stringify({
				template_id: positionalTemplate(business).id,
				from: business.phoneNumbers[0],
				recipients: [{ phone: '+4917099000001', 1: 'a', 2: 'b' }],
			}),
		});
		expect([create.status, create.ms < 3000]).toEqual([503, true]);
		// Not ready, with the reason; but alive: an orchestrator must not restart a process that waits out an outage.
		const notReady = await fetch(`${base}/readyz`);
		expect({ status: notReady.status, body: await notReady.json() }).toEqual({
			status: 503,
			body: { status: 'unavailable', reason: 'Redis does not answer' },
		});
		const alive = await fetch(`${base}/healthz`);
		expect({ status: alive.status, body: await alive.json() }).toEqual({ status: 200, body: { status: 'ok' } });

		redis = await startPrivateRedis(PERSISTENT, dir, port);
		await waitFor(
			'the API to answer 200 again',
			async () => (await call('/api/campaigns').catch(() => undefined))?.status === 200,
			20_000,
		);
		await waitFor(
			'/readyz to answer 200 again',
			async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
			20_000,
		);
		// The workers came back by themselves: a new campaign is sent.
		const phones = ['+4917099000011', '+4917099000012', '+4917099000013'];
		const created = await call('/api/campaigns', {
			method: 'POST',
			body: JSON.stringify({
				template_id: positionalTemplate(business).id,
				from: business.phoneNumbers[0],
				recipients: phones.map((phone) => ({ phone, 1: 'a', 2: 'b' })),
			}),
		});
		expect(created.status).toBe(201);
		await waitFor(
			'the sandbox to receive the 3 sends',
			async () => (await templateSends(sandbox)).filter((message) => phones.includes(`+${message.to}`)).length === 3,
			30_000,
		);
	});

	test('SIGTERM while Redis is down ends the process within RUNNER_SHUTDOWN_DEADLINE (5 s)', async () => {
		if (redis?.process.exitCode !== null || redis.process.signalCode !== null)
			redis = await startPrivateRedis(PERSISTENT, dir, port);
		const running = await startRunner();
		await redis.stop();
		// The runner knows Redis is gone (its readiness says so) before it is told to stop.
		await waitFor(
			'/readyz to answer 503',
			async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 503,
			20_000,
			50,
		);
		const stopping = Date.now();
		const code = await within(running.kill('SIGTERM'), 15_000);
		const stopMs = Date.now() - stopping;
		expect(code).not.toBe('still running');
		expect(stopMs).toBeLessThan(5000 + 1500);
	});
});

test('start with RUNNER_HTTP_HOST=0.0.0.0 and no token exits 1 before any worker takes a job', async () => {
	const redis = await startPrivateRedis();
	const sandbox = await startSandboxProcess();
	const env = {
		...baseEnv(),
		REDIS_URL: redis.url,
		RUNNER_PREFIX: uniquePrefix(),
		CONVO_EXTERNAL_URL: sandbox.externalUrl,
		CONVO_API_KEY: sandbox.fixture.businesses[0].apiKey,
	};
	const context = await openContext(loadConfig(env), createLogger('silent'), { withService: false });
	try {
		// A job waiting in the control queue: any worker of this prefix takes it at once.
		const job = await context.queues.control.add('feed', {});
		const clientsBefore = await clientCount(context.redis);
		const runner = spawnRunner(['start'], {
			...env,
			RUNNER_HTTP_HOST: '0.0.0.0',
			RUNNER_HTTP_PORT: String(await freePort()),
		});
		const code = await within(runner.exited, 30_000);
		if (code === 'still running') await runner.kill('SIGKILL');
		expect(code).toBe(1);
		expect(runner.output()).toContain('RUNNER_TOKEN must be set');
		// Whatever the process sent Redis before it exited has run once Redis has let its connections go: then look.
		await waitForClientsAtMost(context.redis, clientsBefore);
		expect(await job.getState()).toBe('waiting');
		expect(await context.queues.control.getJobSchedulers()).toEqual([]);
		expect(await templateSends(sandbox)).toEqual([]);
	} finally {
		await closeContext(context);
		await redis.stop();
		await sandbox.close();
	}
});
