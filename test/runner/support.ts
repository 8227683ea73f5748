/**
 * What the runner tests share: a real redis-server (REDIS_URL when set, else the jest worker's own,
 * shared under key prefixes, or one of the file's own on a free port), the sandbox over HTTP, runner processes spawned for real (so they can be
 * SIGKILLed), an in-process context for the core library, and counting what the SANDBOX received:
 * the guarantees are checked against the service's own log, never the runner's report.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
	chmodSync,
	copyFileSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';

import type { RunningSandbox } from '../../sandbox/src';
import { loadConfig } from '../../runner/src/config';
import type { RunnerContext } from '../../runner/src/context';
import { createLogger } from '../../runner/src/log';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../runner/src/devRedis';
import { masters, type RedisConnection } from '../../runner/src/redis';
import { closeContext, openContext } from '../../runner/src/runtime';
import { campaignStatus, createCampaign, getCampaign, reportRows } from '../../runner/src/core/campaigns';
import { inlineRecords } from '../../runner/src/source';
import { outboxes } from '../../runner/src/webhooks/outbox';
import type { ReportRow } from '../../runner/src/campaigns/report';
import { TEST_RUNNER_BUNDLE, TEST_SANDBOX_BUNDLE, workerRedisUrl } from '../support/testRun';

/** The repository's bin: it runs the runner's sources through tsx. */
export const RUNNER_BIN = join(__dirname, '..', '..', 'runner', 'bin', 'convo-runner.mjs');
/** The node flags the bin's shebang gives the runner (`#!/usr/bin/env -S node --flag ...`). */
const RUNNER_NODE_FLAGS = readFileSync(RUNNER_BIN, 'utf8')
	.split('\n')[0]
	.split(/\s+/)
	.filter((word) => word.startsWith('--'));
/** node's arguments before the CLI's own to run the repository's bin as its shebang would. */
export const SOURCE_RUNNER_ARGS = [...RUNNER_NODE_FLAGS, RUNNER_BIN];
/**
 * node's arguments before the CLI's own to run the runner as the tests do: the bin's flags on the
 * bundle this jest run built (globalSetup.ts), which starts in a third of the time tsx takes to
 * compile the sources; the repository's bin when there is no bundle.
 */
export const RUNNER_ARGS = [...RUNNER_NODE_FLAGS, process.env[TEST_RUNNER_BUNDLE] ?? RUNNER_BIN];

/**
 * Lays out the runner in `dir` as `npm install convo-runner` does: the bin (bin/, executable) and
 * the built bundle's folder `dist` beside it as dist/ (a link: Node resolves the bundle's
 * dependencies from its real path in the repository's runner/). The bin's path.
 */
export function layOutInstalledRunner(dir: string, dist: string): string {
	mkdirSync(join(dir, 'bin'), { recursive: true });
	const bin = join(dir, 'bin', 'convo-runner.mjs');
	copyFileSync(RUNNER_BIN, bin);
	chmodSync(bin, 0o755);
	symlinkSync(dist, join(dir, 'dist'));
	return bin;
}

export type Business = RunningSandbox['fixture']['businesses'][number];

/** A template with two positional variables and no buttons (fixture "order_update"). */
export function positionalTemplate(business: Business) {
	const template = business.templates.find((t) => t.variables.join() === '1,2' && t.buttons.length === 0);
	if (!template) throw new Error('fixture has no positional template');
	return template;
}

/**
 * A running campaign of `recipients` inline rows from the business's first number, with the
 * positional template: phones `<prefix><index in 5 digits>`, variables `R<index>` and `x`. Its id.
 */
export async function inlineCampaign(
	runner: { context: RunnerContext; business: Business },
	recipients: number,
	prefix: string,
): Promise<string> {
	const rows = Array.from({ length: recipients }, (_, i) => ({
		phone: `${prefix}${String(i).padStart(5, '0')}`,
		1: `R${i}`,
		2: 'x',
	}));
	const { business } = runner;
	const answer = await createCampaign(
		runner.context,
		{ templateId: positionalTemplate(business).id, from: business.phoneNumbers[0], source: 'request.json' },
		inlineRecords(rows),
	);
	if (answer.kind !== 'campaign') throw new Error('expected a campaign');
	return answer.id;
}

/**
 * A Redis for a test file: REDIS_URL when set, else the jest worker's shared redis-server
 * (globalSetup.ts), which the file must use only under its own key prefix (uniquePrefix) and
 * never flush. `own`, or redis-server arguments, start one of the file's own instead: for a test
 * that does what reaches every client of a server (CLIENT PAUSE, a restart, its settings).
 */
export async function useRedisServer(
	extraArgs: string[] = [],
	own = false,
): Promise<{ url: string; stop(): Promise<void>; server?: PrivateRedis }> {
	const shared = own || extraArgs.length > 0 ? undefined : (process.env.REDIS_URL ?? workerRedisUrl());
	if (shared) return { url: shared, stop: async () => undefined };
	const server = await startPrivateRedis(extraArgs);
	return { url: server.url, stop: server.stop, server };
}

/** A plain ioredis connection to a Redis of this file's (useRedisServer) for its tests: opened before them, closed after. */
export function useRedisConnection(): { redis: Redis } {
	const handle = {} as { redis: Redis };
	let server: Awaited<ReturnType<typeof useRedisServer>> | undefined;
	beforeAll(async () => {
		server = await useRedisServer();
		handle.redis = new Redis(server.url);
	});
	afterAll(async () => {
		handle.redis?.disconnect();
		await server?.stop();
	});
	return handle;
}

function redisCli(args: string[]): Promise<string> {
	return new Promise((resolve, reject) =>
		execFile('redis-cli', args, { timeout: 30_000 }, (error, stdout, stderr) =>
			error ? reject(new Error(`redis-cli ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout),
		),
	);
}

/** A CA and a certificate for 127.0.0.1 it signed, in `dir` (openssl; valid two days): a TLS Redis's files. */
export function writeTestCertificates(dir: string): { ca: string; cert: string; key: string } {
	const openssl = (line: string, ...more: string[]) =>
		execFileSync('openssl', [...line.split(' '), ...more], { cwd: dir, stdio: 'pipe' });
	const newKey = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';
	openssl(`req -x509 ${newKey} -keyout ca.key -out ca.crt -days 2 -subj`, '/CN=convo test CA');
	openssl(`req ${newKey} -keyout server.key -out server.csr -subj /CN=127.0.0.1`);
	writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
	openssl('x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile san.cnf');
	return { ca: join(dir, 'ca.crt'), cert: join(dir, 'server.crt'), key: join(dir, 'server.key') };
}

export interface ClusterUnderTest {
	/** What REDIS_CLUSTER_NODES takes. */
	nodes: string;
	stop(): Promise<void>;
}

/**
 * A Redis Cluster of `size` masters on loopback, in a folder of its own (no persistence: it is
 * thrown away): started, joined with `redis-cli --cluster create`, and waited for until every
 * node says cluster_state:ok. `password`: every node's requirepass. `tls`: every node listens with
 * TLS only (writeTestCertificates' files), the cluster's own links too.
 */
export async function startRedisCluster(
	size = 3,
	options: { password?: string; tls?: { ca: string; cert: string; key: string } } = {},
): Promise<ClusterUnderTest> {
	const dir = mkdtempSync(join(tmpdir(), 'convo-redis-cluster-'));
	const servers: PrivateRedis[] = [];
	const stop = async () => {
		await Promise.all(servers.map((server) => server.stop()));
		rmSync(dir, { recursive: true, force: true });
	};
	const { password, tls } = options;
	const cli = [
		...(password ? ['-a', password, '--no-auth-warning'] : []),
		...(tls ? ['--tls', '--cacert', tls.ca] : []),
	];
	try {
		for (let i = 0; i < size; i++) {
			const port = await freePort();
			const secured = [
				...(password ? ['--requirepass', password, '--masterauth', password] : []),
				...(tls ? ['--port', '0', '--tls-port', String(port), '--tls-cluster', 'yes', '--tls-auth-clients', 'no'] : []),
				...(tls ? ['--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca] : []),
			];
			servers.push(
				await startPrivateRedis(
					['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--appendonly', 'no', ...secured],
					dir,
					port,
				),
			);
		}
		const addresses = servers.map((server) => new URL(server.url).host);
		await redisCli([...cli, '--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
		for (const address of addresses) {
			const [host, port] = address.split(':');
			await waitFor(
				`cluster_state:ok on ${address}`,
				async () => /cluster_state:ok/.test(await redisCli([...cli, '-h', host, '-p', port, 'cluster', 'info'])),
				30_000,
			);
		}
		return { nodes: addresses.join(','), stop };
	} catch (error) {
		await stop();
		throw error;
	}
}

let prefixes = 0;
/** A key prefix of this test's own, so tests never touch each other's keys. */
export function uniquePrefix(): string {
	return `t${process.pid}x${Date.now().toString(36)}x${prefixes++}`;
}

export interface RunnerUnderTest {
	sandbox: RunningSandbox;
	business: Business;
	env: NodeJS.ProcessEnv;
	context: RunnerContext;
	processes: SpawnedRunner[];
	spawnWorker(extra?: NodeJS.ProcessEnv, role?: 'worker' | 'start'): SpawnedRunner;
	close(): Promise<void>;
}

export interface SpawnedRunner {
	child: ChildProcess;
	output(): string;
	exited: Promise<number | null>;
	kill(signal: NodeJS.Signals): Promise<number | null>;
}

/** A direct call of lua/start-11.lua (scriptEdges.test.ts, bench/gateScripts.ts): what differs between calls. */
export interface StartScriptCall {
	member: string;
	/** The job's [first, end) indexes; absent for a start taken again. */
	range?: [number, number];
	/** Whether it is the send's first call, which takes the next place on the number's clock (the default). */
	first?: boolean;
	token?: string;
	place?: string;
	/** A send window's opening and close, ms. */
	opening?: [number, number];
	/** How late after its place a lone start still counts at it (ARGV[14]), ms. */
	lateMs?: number;
	/** The volley's span (RUNNER_SEND_VOLLEY), ms. */
	volleyMs?: number;
	/** A volley's starts taken again: how many. */
	again?: number;
}

/** lua/start-11.lua's ARGV in its order, for campaign `c1`: the rest as the runner passes them at the default settings. */
export const startScriptArgs = (call: StartScriptCall, room: number): Array<string | number> => [
	room,
	call.member,
	call.first === false || call.again ? '0' : '1',
	call.range?.[0] ?? '',
	call.range?.[1] ?? '',
	'c1',
	call.again ? '' : (call.token ?? 't'),
	call.again ? 'again' : '',
	call.place ?? '',
	call.opening?.[0] ?? '',
	call.opening?.[1] ?? '',
	'',
	2000,
	call.lateMs ?? 10,
	20_000,
	200,
	call.volleyMs ?? 10,
	...(call.again ? [call.again] : []),
];

/**
 * MONITOR on a connection of its own, answered once it is monitoring. ioredis marks the connection
 * monitoring a tick after MONITOR's OK, so on a busy Redis the lines that arrive in the same read
 * as the OK find no command waiting and it emits "Command queue state error" (ioredis issue 1981).
 * Those lines are of commands sent before the monitor began, which no caller counts: such errors
 * before it is monitoring are dropped; any other error, or one after, fails the caller as before.
 */
export function monitorCommands(redis: Redis): Promise<Redis> {
	const monitor = redis.duplicate({ monitor: true, lazyConnect: false });
	return new Promise((resolve, reject) => {
		const early = (error: Error) => {
			if (error.message.startsWith('Command queue state error')) return;
			reject(error);
		};
		monitor.on('error', early);
		monitor.once('monitoring', () => {
			monitor.off('error', early);
			resolve(monitor);
		});
	});
}

/** `command`: how the runner is run; node on the test run's bundle (RUNNER_ARGS) unless told. */
export function spawnRunner(
	args: string[],
	env: NodeJS.ProcessEnv,
	command: string[] = [process.execPath, ...RUNNER_ARGS],
): SpawnedRunner {
	const child = spawn(command[0], [...command.slice(1), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
	let output = '';
	child.stdout?.on('data', (chunk) => (output += String(chunk)));
	child.stderr?.on('data', (chunk) => (output += String(chunk)));
	const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
	return {
		child,
		output: () => output,
		exited,
		kill: async (signal) => {
			if (child.exitCode === null && child.signalCode === null) child.kill(signal);
			return exited;
		},
	};
}

/** Runs the CLI to its end: exit code, stdout and stderr apart. `runnerArgs`: RUNNER_ARGS or SOURCE_RUNNER_ARGS. */
export async function runCli(
	args: string[],
	env: NodeJS.ProcessEnv,
	timeoutMs = 60_000,
	runnerArgs = RUNNER_ARGS,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
	const child = spawn(process.execPath, [...runnerArgs, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
	let stdout = '';
	let stderr = '';
	child.stdout.on('data', (chunk) => (stdout += String(chunk)));
	child.stderr.on('data', (chunk) => (stderr += String(chunk)));
	const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
	const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
	clearTimeout(timer);
	return { code, stdout, stderr };
}

/** Where the runner's Redis is: a URL, or the seed nodes of a Redis Cluster. */
export type RedisUnderTest = string | { clusterNodes: string };

/** How the file's sandbox is started: `timeline`, its default delivery timeline (sandbox/README.md). */
export interface SandboxUnderTest {
	timeline?: Partial<Record<'sent' | 'delivered' | 'read' | 'failed', number>>;
}

export async function startRunnerUnderTest(
	redis: RedisUnderTest,
	extraEnv: NodeJS.ProcessEnv = {},
	sandboxOptions: SandboxUnderTest = {},
): Promise<RunnerUnderTest> {
	const sandbox = await startSandboxProcess(sandboxOptions);
	const business = sandbox.fixture.businesses[0];
	const env: NodeJS.ProcessEnv = {
		PATH: process.env.PATH,
		HOME: process.env.HOME,
		...(typeof redis === 'string' ? { REDIS_URL: redis } : { REDIS_CLUSTER_NODES: redis.clusterNodes }),
		RUNNER_PREFIX: uniquePrefix(),
		CONVO_EXTERNAL_URL: sandbox.externalUrl,
		CONVO_API_KEY: business.apiKey,
		LOG_LEVEL: 'info',
		// The operator's opt-in (docs/operating/security.md): the feeds and webhook receivers of these tests
		// are servers of their own on loopback, which the runner refuses by default. A test of the
		// default policy passes RUNNER_ALLOW_PRIVATE_URLS: undefined.
		RUNNER_ALLOW_PRIVATE_URLS: 'true',
		...extraEnv,
	};
	const context = await openContext(loadConfig(env), createLogger('silent'), { withService: true });
	const processes: SpawnedRunner[] = [];
	return {
		sandbox,
		business,
		env,
		context,
		processes,
		spawnWorker(extra = {}, role = 'worker') {
			const runner = spawnRunner([role], { ...env, ...extra });
			processes.push(runner);
			return runner;
		},
		async close() {
			await Promise.all(processes.map((p) => p.kill('SIGKILL')));
			await deleteKeys(context.redis, env.RUNNER_PREFIX as string).catch(() => undefined);
			await closeContext(context);
			await sandbox.close();
		},
	};
}

/**
 * One Redis and one runner context for a test file: started before its tests, stopped (processes
 * killed, keys of its prefix deleted, a Redis of its own stopped) after them. `ownRedis`: see
 * useRedisServer; `sandbox`: how its sandbox is started.
 */
export function useRunnerUnderTest(
	extraEnv: NodeJS.ProcessEnv = {},
	options: { ownRedis?: boolean; sandbox?: SandboxUnderTest } = {},
): RunnerUnderTest {
	const runner = {} as RunnerUnderTest;
	let redis: Awaited<ReturnType<typeof useRedisServer>> | undefined;
	beforeAll(async () => {
		redis = await useRedisServer([], options.ownRedis);
		Object.assign(runner, await startRunnerUnderTest(redis.url, extraEnv, options.sandbox));
	});
	afterAll(async () => {
		await runner.close?.();
		await redis?.stop();
	});
	return runner;
}

/** The sandbox's bundle of this jest run (globalSetup.ts), or its bin (the sources through tsx) without one. */
const SANDBOX_ENTRY =
	process.env[TEST_SANDBOX_BUNDLE] ?? join(__dirname, '..', '..', 'sandbox', 'bin', 'convo-sandbox.mjs');

/**
 * The sandbox in a process of its own, as the real service is: its clock (the createdAt it records)
 * is then never stalled by the test runner's own work or garbage collection, which would bunch
 * requests that arrived evenly and make a rate look broken.
 */
export async function startSandboxProcess(options: SandboxUnderTest = {}): Promise<RunningSandbox> {
	const timeline = options.timeline
		? [
				'--timeline',
				Object.entries(options.timeline)
					.map(([step, ms]) => `${step}=${ms}`)
					.join(','),
			]
		: [];
	// A port the system picks, read from the sandbox's own banner: one chosen here and bound later
	// could be taken in between by any connection's own port.
	const child = spawn(process.execPath, [SANDBOX_ENTRY, '--port', '0', ...timeline], {
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout?.on('data', (chunk) => (output += String(chunk)));
	child.stderr?.on('data', (chunk) => (output += String(chunk)));
	let baseUrl = '';
	const fixture = await waitFor(
		`the sandbox to start (${output})`,
		async () => {
			if (child.exitCode !== null) throw new Error(`the sandbox exited: ${output}`);
			baseUrl = /base_url\s+(http:\/\/\S+)/.exec(output)?.[1] ?? '';
			if (!baseUrl) return undefined;
			const response = await fetch(`${baseUrl}/__sandbox/fixture`).catch(() => undefined);
			return response?.ok ? ((await response.json()) as RunningSandbox['fixture']) : undefined;
		},
		30_000,
		100,
	);
	return {
		baseUrl,
		externalUrl: fixture.externalUrl,
		fixture,
		close: async () => {
			if (child.exitCode === null && child.signalCode === null) {
				const exited = new Promise((resolve) => child.once('exit', resolve));
				child.kill('SIGTERM');
				await exited;
			}
		},
	};
}

/**
 * A spawned `start`'s API base URL, as its own log line (info) names it, once `path` answers 200
 * there. Spawned with RUNNER_HTTP_PORT 0, its port is the one the system picked: a port chosen here
 * and bound later could be taken in between by any connection's own port.
 */
export async function apiUrlOf(api: SpawnedRunner, path = '/readyz'): Promise<string> {
	let exitCode: number | null | undefined;
	void api.exited.then((code) => (exitCode = code));
	try {
		// A start is work, not a bound: in a loaded CI run's parallel lane one took over 30 s.
		return await waitFor(
			`the API to answer ${path}`,
			async () => {
				if (exitCode !== undefined) throw new Error(`convo-runner start exited (${exitCode}) before it answered`);
				const url = /control API and console at (http:\/\/[^\s"]+)/.exec(api.output())?.[1];
				if (!url) return undefined;
				return (await fetch(`${url}${path}`).catch(() => undefined))?.ok ? url : undefined;
			},
			90_000,
		);
	} catch (error) {
		throw new Error(`${(error as Error).message}; its output:\n${api.output().slice(-2000)}`);
	}
}

/** Spawns `convo-runner start` with its API on a port the system picks and waits until it is ready (apiUrlOf). */
export async function startApiProcess(
	runner: RunnerUnderTest,
	extra: NodeJS.ProcessEnv = {},
): Promise<{ base: string; process: SpawnedRunner }> {
	const api = runner.spawnWorker({ RUNNER_HTTP_PORT: '0', ...extra }, 'start');
	return { base: await apiUrlOf(api), process: api };
}

/** `startApiProcess`'s base URL alone. */
export async function startApi(runner: RunnerUnderTest, extra: NodeJS.ProcessEnv = {}): Promise<string> {
	return (await startApiProcess(runner, extra)).base;
}

/** What rawUpload sends: the request line's path, the bearer token, the body's type and its declared length. */
export interface RawUploadRequest {
	path: string;
	token: string;
	type?: string;
	total: number;
}

/**
 * A raw upload on a connection of its own: the headers and `first` at once, then `rest` one piece
 * every `everyMs`; the answer (status, body, when it came) and whether the server closed the socket
 * within 3 s after it. Rejects when the connection ends without an answer (given up after `giveUpMs`).
 */
export function rawUpload(
	port: number,
	request: RawUploadRequest,
	first: string,
	rest: string[],
	everyMs: number,
	giveUpMs = 20_000,
): Promise<{ status: number; afterMs: number; text: string; closed: Promise<boolean> }> {
	return new Promise((resolve, reject) => {
		const socket = connect(port, '127.0.0.1');
		const started = Date.now();
		let text = '';
		let answered = false;
		let closedBy: NodeJS.Timeout | undefined;
		const closed = new Promise<boolean>((done) => {
			socket.on('close', () => done(true));
			// Asked after the answer: the server has 3 s to close the connection.
			closedBy = setTimeout(() => done(false), giveUpMs + 3000);
		});
		const giveUp = setTimeout(() => socket.destroy(), giveUpMs);
		const pieces: NodeJS.Timeout[] = [];
		socket.on('connect', () => {
			socket.write(
				`POST ${request.path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${request.token}\r\ncontent-type: ${request.type ?? 'text/csv'}\r\ncontent-length: ${request.total}\r\n\r\n${first}`,
			);
			rest.forEach((piece, i) =>
				pieces.push(setTimeout(() => !socket.destroyed && socket.write(piece), everyMs * (i + 1))),
			);
		});
		socket.on('data', (chunk) => {
			text += String(chunk);
			const [head, body = ''] = text.split('\r\n\r\n');
			const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1);
			if (!answered && length >= 0 && Buffer.byteLength(body) >= length) {
				answered = true;
				resolve({
					status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0),
					afterMs: Date.now() - started,
					text,
					closed: (async () => {
						clearTimeout(closedBy);
						const value = await Promise.race([
							closed,
							new Promise<boolean>((done) => (closedBy = setTimeout(() => done(false), 3000))),
						]);
						clearTimeout(closedBy);
						clearTimeout(giveUp);
						socket.destroy();
						return value;
					})(),
				});
			}
		});
		socket.on('error', reject);
		socket.on('close', () => {
			pieces.forEach(clearTimeout);
			if (!answered) reject(new Error(`closed without an answer after ${Date.now() - started} ms: ${text}`));
		});
	});
}

/** An answer of the runner's API as tests read it; `json` is undefined when the body is not JSON. */
export interface ApiAnswer {
	status: number;
	text: string;
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	json: any;
}

/**
 * Calls the runner's API at `base()` with the bearer `token`: a string body goes as it is (CSV,
 * hand-written JSON; its type in `headers`), anything else as JSON. `seen` gets every answer's
 * text, for tests that check no secret was ever answered.
 */
export function apiCaller(base: () => string, token: string, seen?: (text: string) => void) {
	return async (
		method: string,
		path: string,
		body?: unknown,
		headers: Record<string, string> = {},
	): Promise<ApiAnswer> => {
		const type: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
		const response = await fetch(`${base()}${path}`, {
			method,
			headers: { authorization: `Bearer ${token}`, ...type, ...headers },
			body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
		});
		const text = await response.text();
		seen?.(text);
		let json: unknown;
		try {
			json = text ? JSON.parse(text) : undefined;
		} catch {
			json = undefined;
		}
		return { status: response.status, text, json };
	};
}

/** Polls until `check` returns a value; fails with `what` after `timeoutMs`. Every wait is bounded. */
export async function waitFor<T>(
	what: string,
	check: () => Promise<T | undefined | false>,
	timeoutMs = 60_000,
	everyMs = 200,
): Promise<T> {
	const started = Date.now();
	for (;;) {
		const value = await check();
		if (value !== undefined && value !== false) return value;
		if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, everyMs));
	}
}

/**
 * Waits until every webhook event emitted so far has had every delivery attempt it will get: the
 * wait that proves "nothing more arrives" without a fixed sleep. The outbox is read first: the
 * dispatcher queues an event's deliveries before trimming it from the outbox, so once the outbox is
 * empty every earlier event is a delivery job, and an events queue with none waiting, delayed (a
 * retry's backoff, a webhook busy with another delivery) or active has made all its attempts.
 * A test receiver records an attempt before it answers, so before the job ends.
 */
export async function waitForEventsDelivered(context: RunnerContext, timeoutMs = 30_000): Promise<void> {
	const { redis, queues } = context;
	await waitFor(
		'every webhook event emitted so far to be delivered',
		async () => {
			for (const outbox of await outboxes(context)) if ((await redis.llen(outbox)) > 0) return false;
			const counts = await queues.events.getJobCounts(
				'waiting',
				'prioritized',
				'delayed',
				'active',
				'waiting-children',
			);
			return Object.values(counts).every((count) => count === 0);
		},
		timeoutMs,
		100,
	);
}

/**
 * Waits for one feeder tick that began after this call to run to its end: the moment by which
 * anything the feeder would do about what the test just saw (complete a campaign, feed it, report
 * it again) is done. The tick is a job of the control queue's job scheduler, `repeat:feeder:<ms of
 * its run>`; its end is a `completed` entry in that queue's event stream (BullMQ writes one even
 * though the job itself is removed on completion).
 */
export async function waitForFeederTick(context: RunnerContext, timeoutMs = 30_000): Promise<void> {
	const since = Date.now();
	const stream = context.queues.control.keys.events;
	await waitFor(
		'a feeder tick that began after now to end',
		async () => {
			const entries = await context.redis.xrange(stream, String(since), '+');
			return entries.some(([, fields]) => {
				const field = (name: string) => fields[fields.indexOf(name) + 1];
				const tick = /^repeat:feeder:(\d+)$/.exec(field('jobId') ?? '');
				return field('event') === 'completed' && tick !== null && Number(tick[1]) >= since;
			});
		},
		timeoutMs,
		50,
	);
}

/**
 * Waits for one delivery tracking tick that began after this call to run to its end (as
 * waitForFeederTick does for the feeder's): by then a tracking process has walked every campaign
 * being tracked and made the checks that were due when the tick began, up to a second's worth.
 */
export async function waitForTrackingTick(context: RunnerContext, timeoutMs = 30_000): Promise<void> {
	const since = Date.now();
	const stream = context.queues.shared('tracking').keys.events;
	await waitFor(
		'a tracking tick that began after now to end',
		async () => {
			const entries = await context.redis.xrange(stream, String(since), '+');
			return entries.some(([, fields]) => {
				const field = (name: string) => fields[fields.indexOf(name) + 1];
				const tick = /^repeat:tracker:(\d+)$/.exec(field('jobId') ?? '');
				return field('event') === 'completed' && tick !== null && Number(tick[1]) >= since;
			});
		},
		timeoutMs,
		50,
	);
}

/**
 * Waits until Redis has at most `count` clients: after a process that used it exited, the moment
 * every command it had sent has run (Redis runs what a client sent before it notices the client
 * closed, and lists it until then). `count`: the clients before that process started.
 */
export async function waitForClientsAtMost(redis: RedisConnection, count: number, timeoutMs = 30_000): Promise<void> {
	await waitFor(
		`Redis to have at most ${count} clients`,
		async () => (await clientCount(redis)) <= count,
		timeoutMs,
		50,
	);
}

/** Clients connected to this Redis now (ours included). */
export async function clientCount(redis: RedisConnection): Promise<number> {
	const listed = String(await redis.call('CLIENT', 'LIST'));
	return listed.split('\n').filter((line) => line.startsWith('id=')).length;
}

export interface SandboxMessage {
	uuid: string;
	to: string;
	from: string;
	source: string;
	createdAt: string;
	template?: { id: string; variables: Record<string, string> };
	/** The call as the sandbox received it; `receivedAt` is its arrival, before any injected latency. */
	request?: { receivedAt?: string };
}

/** Every template send the sandbox accepted (its own log). */
export async function templateSends(sandbox: RunningSandbox): Promise<SandboxMessage[]> {
	const response = await fetch(`${sandbox.baseUrl}/__sandbox/messages`);
	const all = (await response.json()) as SandboxMessage[];
	return all.filter((message) => message.source === 'template');
}

/**
 * Through the API of a `start` process at `base` (RUNNER_TOKEN `token`): waits until it is ready,
 * creates a campaign of `phones` with the business's positional template, and waits until the
 * sandbox's log holds one send to each. The campaign's id.
 */
export async function sendThroughApi(
	runner: SpawnedRunner,
	base: string,
	token: string,
	sandbox: RunningSandbox,
	phones: string[],
): Promise<string> {
	await waitFor(
		`the API to be ready (${runner.output()})`,
		async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.ok,
		30_000,
	);
	const business = sandbox.fixture.businesses[0];
	const created = await fetch(`${base}/api/campaigns`, {
		method: 'POST',
		headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			template_id: positionalTemplate(business).id,
			from: business.phoneNumbers[0],
			recipients: phones.map((phone) => ({ phone, 1: 'a', 2: 'b' })),
		}),
	});
	if (created.status !== 201)
		throw new Error(`the campaign was not created: ${created.status} ${await created.text()}`);
	await waitFor(
		`the sandbox to receive the ${phones.length} sends`,
		async () =>
			(await templateSends(sandbox)).filter((message) => phones.includes(`+${message.to}`)).length === phones.length,
		30_000,
	);
	return ((await created.json()) as { id: string }).id;
}

/**
 * A plain forwarding proxy in front of the sandbox that remembers every request's URL (never its
 * headers): the sandbox's log holds only accepted sends, this counts attempts, refused ones too.
 */
export async function startCountingProxy(
	target: string,
): Promise<{ url: string; requests: URL[]; arrivals: number[]; close(): Promise<void> }> {
	const requests: URL[] = [];
	/** When each request arrived (epoch ms), in the order of `requests`. */
	const arrivals: number[] = [];
	const server = createServer((incoming, outgoing) => {
		const url = new URL(incoming.url ?? '/', target);
		requests.push(url);
		arrivals.push(Date.now());
		const upstream = httpRequest(url, { method: incoming.method, headers: incoming.headers }, (answer) => {
			outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
			answer.pipe(outgoing);
		});
		upstream.on('error', () => outgoing.destroy());
		incoming.pipe(upstream);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		arrivals,
		close: async () => {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		},
	};
}

export async function setFault(sandbox: RunningSandbox, fault: Record<string, unknown>): Promise<void> {
	const response = await fetch(`${sandbox.baseUrl}/__sandbox/faults`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(fault),
	});
	if (!response.ok) throw new Error(`fault refused: ${await response.text()}`);
}

export async function clearFaults(sandbox: RunningSandbox): Promise<void> {
	await fetch(`${sandbox.baseUrl}/__sandbox/faults`, { method: 'DELETE' });
}

/** The sandbox's delivery settings (POST /__sandbox/delivery; sandbox/README.md). */
export interface DeliverySettings {
	seed: string | number;
	delivered: number;
	read: number;
	failed?: { share: number; reason: string }[];
	replied?: number;
	reply_texts?: string[];
	delays_ms?: Partial<Record<'sent' | 'delivered' | 'read' | 'failed' | 'reply', number>>;
	/** Shares per template id, in place of delivered/read/replied for that template's sends. */
	templates?: Record<string, { delivered: number; read: number; replied?: number }>;
}

/** What the sandbox drew for one accepted send, and when each step happens (ISO times). */
export interface DeliveryOutcome {
	message_id: string;
	to: string;
	outcome: 'sent' | 'delivered' | 'read' | 'failed';
	reason?: string;
	sent_at: string;
	delivered_at?: string;
	read_at?: string;
	failed_at?: string;
	replied_at?: string;
	reply_text?: string;
}

/** Service times of every A1 request per message id and every B7 request per phone digits. */
export interface DeliveryChecks {
	status: Record<string, string[]>;
	conversations: Record<string, string[]>;
}

/** Sets the delivery settings for the sends that follow; `null` returns to the default timeline. */
export async function setDelivery(sandbox: RunningSandbox, settings: DeliverySettings | null): Promise<void> {
	const response = await fetch(
		`${sandbox.baseUrl}/__sandbox/delivery`,
		settings === null
			? { method: 'DELETE' }
			: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(settings) },
	);
	if (!response.ok) throw new Error(`delivery settings refused: ${await response.text()}`);
}

/** Every send the sandbox accepted (A2 and B8), in arrival order, with its drawn outcome. */
export async function deliveryOutcomes(sandbox: RunningSandbox): Promise<DeliveryOutcome[]> {
	return (await fetch(`${sandbox.baseUrl}/__sandbox/delivery/outcomes`)).json() as Promise<DeliveryOutcome[]>;
}

/** The A1 and B7 requests the sandbox received since start, reset or DELETE /__sandbox/requests. */
export async function deliveryChecks(sandbox: RunningSandbox): Promise<DeliveryChecks> {
	return (await fetch(`${sandbox.baseUrl}/__sandbox/delivery/checks`)).json() as Promise<DeliveryChecks>;
}

/** A CSV of `count` distinct recipients (+ `extraLines`), phone numbers derived from `seed`. */
export function writeRecipientsCsv(
	count: number,
	options: { seed?: number; extraLines?: string[] } = {},
): { path: string; phones: string[] } {
	const seed = options.seed ?? 0;
	const phones = Array.from(
		{ length: count },
		(_, i) => `49170${String(seed).padStart(2, '0')}${String(i).padStart(6, '0')}`,
	);
	const lines = [
		'phone,1,2',
		...phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`),
		...(options.extraLines ?? []),
	];
	const dir = mkdtempSync(join(tmpdir(), 'convo-recipients-'));
	const path = join(dir, 'recipients.csv');
	writeFileSync(path, `${lines.join('\n')}\n`);
	return { path, phones };
}

export async function report(context: RunnerContext, id: string): Promise<ReportRow[]> {
	const rows: ReportRow[] = [];
	for await (const row of reportRows(context, id)) rows.push(row);
	return rows;
}

/**
 * Moves one campaign's clock on by `ms`: its `clock_offset`, the field RUNNER_TEST_CLOCK_OFFSET_MS
 * gives a campaign at its create, which every process and the claim's script read its windows and
 * its end on. For a test that has seen what it waited for and would otherwise wait for the end in
 * real time.
 */
export async function moveCampaignClock(context: RunnerContext, id: string, ms: number): Promise<void> {
	const { from } = await getCampaign(context, id);
	await context.redis.hincrby(context.keys.campaign(from, id), 'clock_offset', ms);
}

/**
 * A campaign's delivery tracking as counts of its records by state, step, open and unanswered
 * asks (`s:r k:1 o:0 u:0`), and the ledger's counts: what an assertion on a funnel or an A/B
 * verdict shows beside its figures when it fails, so a failure in a loaded run explains itself.
 */
export async function trackingTally(
	context: RunnerContext,
	id: string,
): Promise<{ tracking: Record<string, number>; counts: Record<string, number> }> {
	const { from } = await getCampaign(context, id);
	const records = await context.redis.hvals(context.keys.tracked(from, id));
	const tracking: Record<string, number> = {};
	for (const text of records) {
		const record = JSON.parse(text) as { s: string; k: number; o?: number; u?: number };
		const key = `s:${record.s} k:${record.k} o:${record.o ?? 0} u:${record.u ?? 0}`;
		tracking[key] = (tracking[key] ?? 0) + 1;
	}
	return { tracking, counts: { ...(await campaignStatus(context, id)).counts } };
}

/**
 * The busiest span of `times` (epoch ms, any order): how many fall within `spanMs` of the first of
 * them, when it starts, and the gaps between them (ms).
 */
export function busiestSpan(times: number[], spanMs = 1000): { count: number; startsAt: string; gapsMs: number[] } {
	const sorted = [...times].sort((a, b) => a - b);
	let best = { first: 0, last: -1 };
	for (let first = 0, last = 0; last < sorted.length; last++) {
		while (sorted[last] - sorted[first] >= spanMs) first++;
		if (last - first > best.last - best.first) best = { first, last };
	}
	const inside = sorted.slice(best.first, best.last + 1);
	return {
		count: inside.length,
		startsAt: inside.length > 0 ? new Date(inside[0]).toISOString() : '',
		gapsMs: inside.slice(1).map((time, i) => time - inside[i]),
	};
}

/**
 * Fails when any span of `spanMs` holds more than `most` of `times`, naming that span's start and
 * the gaps within it (a loaded run's breach then shows whether the sends came bunched after a
 * stall or evenly too fast); else answers its count.
 */
export function expectBusiestAtMost(times: number[], most: number, spanMs = 1000): number {
	const busiest = busiestSpan(times, spanMs);
	if (busiest.count > most)
		throw new Error(
			`${busiest.count} in the ${spanMs} ms from ${busiest.startsAt}, more than ${most}; ` +
				`gaps between them (ms): ${busiest.gapsMs.join(' ')}`,
		);
	return busiest.count;
}

/** Groups sends by recipient: more than one entry is a duplicate. */
export function sendsByPhone(messages: SandboxMessage[]): Map<string, SandboxMessage[]> {
	const map = new Map<string, SandboxMessage[]>();
	for (const message of messages) map.set(message.to, [...(map.get(message.to) ?? []), message]);
	return map;
}

/**
 * The report agrees with the sandbox's own log, phone by phone: each `sent` row has exactly one
 * message with the report's id; every other row (failed, rejected, unknown, ...) has none; no
 * phone got two messages. A rejected duplicate shares its phone with the row that was sent.
 */
export function expectReportMatchesLog(rows: ReportRow[], sends: SandboxMessage[]): void {
	const byPhone = sendsByPhone(sends);
	const rowsByPhone = new Map<string, ReportRow[]>();
	for (const row of rows) rowsByPhone.set(row.phone, [...(rowsByPhone.get(row.phone) ?? []), row]);
	const mismatches: unknown[] = [];
	for (const [phone, phoneRows] of rowsByPhone) {
		const sentIds = phoneRows.filter((row) => row.outcome === 'sent').map((row) => row.message_id);
		const received = (byPhone.get(phone) ?? []).map((message) => message.uuid);
		if (sentIds.length > 1 || received.length !== sentIds.length || received.some((id) => !sentIds.includes(id))) {
			mismatches.push({
				phone,
				report: phoneRows.map((row) => `${row.line}:${row.outcome}:${row.message_id}`),
				sandbox: received,
			});
		}
	}
	expect(mismatches).toEqual([]);
}

/** Neither secret of the business (API key, access token) appears in any of the named texts. */
export function expectNoSecret(business: Business, places: Record<string, string>): void {
	const leaks = Object.entries(places).flatMap(([where, text]) => [
		...(text.includes(business.apiKey) ? [`${where}: the API key`] : []),
		...(text.includes(business.accessToken) ? [`${where}: the access token`] : []),
	]);
	expect(leaks).toEqual([]);
}

/**
 * Every key under the prefix, on every master (one for a single Redis). `prefix` is the runner's
 * (RUNNER_PREFIX: its keys are `<prefix>:…`) or the start of a longer key name (`<prefix>:{n…}:`).
 */
export async function scanKeys(redis: RedisConnection, prefix: string): Promise<string[]> {
	const found: string[] = [];
	const pattern = `${prefix.replace(/[{}[\]*?\\]/g, '\\$&')}${prefix.includes(':') ? '' : ':'}*`;
	for (const node of masters(redis)) {
		let cursor = '0';
		do {
			const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
			found.push(...keys);
			cursor = next;
		} while (cursor !== '0');
	}
	return found;
}

/** Every key and value the run created, dumped as text, for a secret scan. */
export async function dumpKeys(redis: RedisConnection, prefix: string): Promise<string> {
	const parts: string[] = [];
	for (const key of await scanKeys(redis, prefix)) {
		parts.push(key);
		const type = await redis.type(key);
		if (type === 'string') parts.push(String(await redis.get(key)));
		else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
		else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
		else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
		else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES')));
		else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
	}
	return parts.join('\n');
}

/** One key per command: on a Redis Cluster the keys of a prefix are in many slots. */
async function deleteKeys(redis: RedisConnection, prefix: string): Promise<void> {
	for (const node of masters(redis)) {
		const keys = await scanKeys(node, prefix);
		for (let i = 0; i < keys.length; i += 500) {
			const batch = node.pipeline();
			for (const key of keys.slice(i, i + 500)) batch.unlink(key);
			await batch.exec();
		}
	}
}
