/**
 * Redis connections: one Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES), with the
 * settings BullMQ needs. Where neither is set, a private redis-server child on a free port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Cluster, Redis, type RedisOptions } from 'ioredis';

import type { Logger } from './log';

export type RedisConnection = Redis | Cluster;

export interface RedisTarget {
	url?: string;
	clusterNodes?: string;
}

/** BullMQ blocks on its connections: commands must wait for a reconnect, never fail after N retries. */
const BASE_OPTIONS: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: true };

export function connect(target: RedisTarget): RedisConnection {
	if (target.clusterNodes) {
		const nodes = target.clusterNodes.split(',').map((pair) => {
			const [host, port] = pair.split(':');
			return { host, port: Number(port) };
		});
		return new Cluster(nodes, { redisOptions: BASE_OPTIONS, enableReadyCheck: true });
	}
	if (!target.url) throw new Error('connect() needs REDIS_URL or REDIS_CLUSTER_NODES');
	return new Redis(target.url, BASE_OPTIONS);
}

/** Every master of the target (one for a single Redis), for INFO and SCAN. */
export function masters(connection: RedisConnection): Redis[] {
	return connection instanceof Cluster ? connection.nodes('master') : [connection];
}

/** The guarantees need Redis to keep every key: warn when it may evict. */
export async function checkRedis(connection: RedisConnection, log: Logger): Promise<void> {
	for (const node of masters(connection)) {
		const info = await node.info('server');
		const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '0';
		const [major, minor] = version.split('.').map(Number);
		if (major < 6 || (major === 6 && minor < 2)) throw new Error(`Redis ${version} is too old: the runner needs Redis 6.2 or newer`);
		const policy = await node.config('GET', 'maxmemory-policy').catch(() => undefined);
		const value = Array.isArray(policy) ? policy[1] : undefined;
		if (value !== undefined && value !== 'noeviction') {
			log.warn({ maxmemoryPolicy: value }, 'Redis maxmemory-policy is not noeviction: under memory pressure Redis may drop queue and ledger keys');
		}
	}
}

export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			server.close(() => resolve(port));
		});
	});
}

export interface PrivateRedis {
	url: string;
	process: ChildProcess;
	stop(): Promise<void>;
}

/**
 * Starts redis-server on loopback in a temporary folder; `extraArgs` e.g. AOF settings. A given
 * `port` and `dir` start it again where it was (a restart that finds its AOF).
 */
export async function startPrivateRedis(extraArgs: string[] = [], dir?: string, port?: number): Promise<PrivateRedis> {
	port ??= await freePort();
	const workDir = dir ?? mkdtempSync(join(tmpdir(), 'convo-redis-'));
	const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', workDir, '--maxmemory-policy', 'noeviction', ...extraArgs], {
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout?.on('data', (chunk) => (output += String(chunk)));
	child.stderr?.on('data', (chunk) => (output += String(chunk)));
	await new Promise<void>((resolve, reject) => {
		child.once('error', (error: NodeJS.ErrnoException) =>
			reject(
				error.code === 'ENOENT'
					? new Error('REDIS_URL is not set and no redis-server is on PATH: install Redis (e.g. apt-get install redis-server) or set REDIS_URL')
					: error,
			),
		);
		child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`)));
		const started = Date.now();
		const poll = setInterval(() => {
			if (/Ready to accept connections/.test(output)) {
				clearInterval(poll);
				resolve();
			} else if (Date.now() - started > 10_000) {
				clearInterval(poll);
				reject(new Error(`redis-server did not start within 10 s: ${output.slice(-500)}`));
			}
		}, 20);
	});
	child.removeAllListeners('exit');
	const stop = async () => {
		if (child.exitCode === null && child.signalCode === null) {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill('SIGTERM');
			await exited;
		}
		if (!dir) rmSync(workDir, { recursive: true, force: true });
	};
	return { url: `redis://127.0.0.1:${port}`, process: child, stop };
}

/**
 * A Lua script as a function of (keys, args). ioredis defines it once per connection and then
 * calls it by its SHA; every key it touches is passed in `keys`, so it runs on a Cluster too.
 */
export function luaScript(connection: RedisConnection, name: string, lua: string, numberOfKeys: number): (keys: string[], args: Array<string | number>) => Promise<unknown> {
	if (!(name in connection)) connection.defineCommand(name, { lua, numberOfKeys });
	return (keys, args) => (connection as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>)[name](...keys, ...args);
}
