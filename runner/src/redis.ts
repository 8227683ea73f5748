/**
 * Redis connections: one Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES), with the
 * settings BullMQ needs; the start-up check of what the guarantees need from it. Its scripts are
 * lua/*.lua, loaded by redisScripts.ts.
 * The throwaway redis-server for development and tests is devRedis.ts.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';

import type { Logger } from './log';

export type RedisConnection = Redis | Cluster;

export interface RedisTarget {
	url?: string;
	clusterNodes?: string;
	/** The user and password the Cluster's nodes are reached with (REDIS_URL carries its own). */
	clusterAuth?: { username?: string; password?: string };
	/** The Cluster's nodes over TLS (REDIS_URL says it with rediss://). */
	clusterTls?: boolean;
}

/**
 * `worker`: BullMQ blocks on its connections, and a send already made must be settled once Redis is
 * back: commands wait for a reconnect, never fail after N retries.
 * `client` (the CLI, the HTTP API): someone waits for the answer, so a command fails after one
 * reconnect attempt, a connect after 3 s and a command a hung server never answers after 5 s.
 */
const OPTIONS: Record<'worker' | 'client', RedisOptions> = {
	worker: { maxRetriesPerRequest: null, enableReadyCheck: true },
	client: { maxRetriesPerRequest: 1, enableReadyCheck: true, connectTimeout: 3000, commandTimeout: 5000 },
};

/** How long a client waits for its first connection before it reports Redis unreachable. */
export const CLIENT_READY_MS = 3000;

export function connect(target: RedisTarget, kind: 'worker' | 'client' = 'worker'): RedisConnection {
	const options = OPTIONS[kind];
	if (target.clusterNodes) {
		const nodes = target.clusterNodes.split(',').map((pair) => {
			const [host, port] = pair.split(':');
			return { host, port: Number(port) };
		});
		const { username, password } = target.clusterAuth ?? {};
		return new Cluster(nodes, {
			redisOptions: { ...options, username, password, ...(target.clusterTls ? { tls: {} } : {}) },
			enableReadyCheck: true,
			// Over TLS a node's certificate is checked against the name it is reached by: given to TLS as
			// written, not first resolved to an address the certificate does not name.
			...(target.clusterTls ? { dnsLookup: (address, lookedUp) => lookedUp(null, address) } : {}),
		});
	}
	if (!target.url) throw new Error('connect() needs REDIS_URL or REDIS_CLUSTER_NODES');
	return new Redis(target.url, options);
}

/** Raised when Redis cannot be reached or does not answer in time: the API answers 503, the CLI exits 1. */
export class RedisUnavailable extends Error {}

/** The messages of ioredis's errors for a connection lost or never made. */
const LOST_CONNECTION = new RegExp(
	'^(' +
		[
			'Command timed out',
			'Connection is closed',
			"Stream isn't writeable",
			'None of startup nodes is available',
			'Reached the max retries per request limit',
		].join('|') +
		')',
);

/** Errors ioredis raises when the server is gone or silent (not a command's own error reply). */
export function isRedisUnavailable(error: unknown): boolean {
	if (error instanceof RedisUnavailable) return true;
	const { name, message, code } = error as { name?: string; message?: string; code?: string };
	if (name === 'MaxRetriesPerRequestError') return true;
	if (
		code !== undefined &&
		['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE'].includes(code)
	)
		return true;
	return LOST_CONNECTION.test(message ?? '');
}

/** Where Redis is, for an error message: host and port only (a URL may hold a password). */
export function describeTarget(target: RedisTarget): string {
	if (target.clusterNodes) return `the Redis Cluster at ${target.clusterNodes}`;
	try {
		const url = new URL(target.url ?? '');
		return `Redis at ${url.hostname}:${url.port || 6379}`;
	} catch {
		return 'Redis';
	}
}

/**
 * What a failed connect says: a Cluster's "Failed to refresh slots cache" with the last node's own
 * error after it (a refused password, a certificate not trusted), and what to set for a password.
 */
function connectError(error: Error): string {
	const said = (failure: Error) => failure.message || (failure as NodeJS.ErrnoException).code || String(failure);
	const nodeError = (error as Error & { lastNodeError?: Error }).lastNodeError;
	const message = nodeError ? `${said(error).replace(/\.$/, '')}: ${said(nodeError)}` : said(error);
	if (!/\b(NOAUTH|WRONGPASS)\b/.test(message)) return message;
	return `${message.replace(/\.$/, '')}; the password: REDIS_CLUSTER_PASSWORD for a Cluster, in REDIS_URL otherwise`;
}

/** Waits for the connection to be ready, at most `ms`; else RedisUnavailable with the last connect error. */
export async function whenReady(connection: RedisConnection, where: string, ms = CLIENT_READY_MS): Promise<void> {
	if (connection.status === 'ready') return;
	let lastError = '';
	const onError = (error: Error) => (lastError = connectError(error));
	connection.on('error', onError);
	try {
		await new Promise<void>((resolve, reject) => {
			const timer = setTimeout(
				() =>
					reject(
						new RedisUnavailable(`${where} does not answer within ${ms / 1000} s${lastError ? ` (${lastError})` : ''}`),
					),
				ms,
			);
			connection.once('ready', () => {
				clearTimeout(timer);
				resolve();
			});
		});
	} finally {
		connection.off('error', onError);
	}
}

/** Every master of the target (one for a single Redis), for INFO and SCAN. */
export function masters(connection: RedisConnection): Redis[] {
	return connection instanceof Cluster ? connection.nodes('master') : [connection];
}

/** Raised when Redis lacks what RUNNER_REQUIRE_AOF=true demands: the process does not start. */
export class RedisSettingsError extends Error {}

/**
 * A setting of one master read with CONFIG GET; undefined when
 * CONFIG is refused (a managed Redis may rename or forbid it).
 */
async function configValue(node: Redis, name: string): Promise<{ value?: string; refused?: string }> {
	try {
		const answer = await node.config('GET', name);
		const value = Array.isArray(answer) ? answer[1] : undefined;
		return typeof value === 'string' ? { value } : { refused: 'CONFIG GET gave no value' };
	} catch (error) {
		return { refused: (error as Error).message };
	}
}

/**
 * What the guarantees need from Redis, checked once at start: version 6.2 or newer; every key kept
 * (`maxmemory-policy noeviction`, else a warning: an evicted ledger key forgets what was sent); an
 * append-only file (`appendonly yes`), without which a Redis restart loses the ledger: a warning,
 * or a refusal to start with `requireAof` (RUNNER_REQUIRE_AOF=true), also when it cannot be checked.
 */
export async function checkRedis(
	connection: RedisConnection,
	log: Logger,
	options: { requireAof?: boolean } = {},
): Promise<void> {
	const withoutAof: string[] = [];
	const unchecked: string[] = [];
	const fsync = new Set<string>();
	// A Cluster knows its masters only once it has read the slots: asked before, it lists none.
	if (connection instanceof Cluster && connection.status !== 'ready')
		await new Promise((resolve) => connection.once('ready', resolve));
	const nodes = masters(connection);
	if (nodes.length === 0) unchecked.push('the Redis Cluster (no master known)');
	for (const node of nodes) {
		const where = `${node.options.host}:${node.options.port}`;
		const info = await node.info('server');
		const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '0';
		const [major, minor] = version.split('.').map(Number);
		if (major < 6 || (major === 6 && minor < 2))
			throw new Error(`Redis ${version} is too old: the runner needs Redis 6.2 or newer`);
		const policy = await configValue(node, 'maxmemory-policy');
		if (policy.value !== undefined && policy.value !== 'noeviction') {
			log.warn(
				{ maxmemoryPolicy: policy.value },
				'Redis maxmemory-policy is not noeviction: under memory pressure Redis may drop queue and ledger keys',
			);
		}
		const appendonly = await configValue(node, 'appendonly');
		if (appendonly.refused !== undefined) unchecked.push(`${where} (${appendonly.refused})`);
		else if (appendonly.value !== 'yes') withoutAof.push(where);
		else fsync.add((await configValue(node, 'appendfsync')).value ?? 'unknown');
	}
	const fix =
		'run Redis with appendonly yes and appendfsync always (redis-server --appendonly yes --appendfsync always, ' +
		'or CONFIG SET appendonly yes then CONFIG REWRITE)';
	if (withoutAof.length > 0) {
		const risk =
			`Redis at ${withoutAof.join(', ')} runs with appendonly no: ` +
			'a Redis restart or crash loses the ledger and the queues, ' +
			'so recipients already sent may be sent again and pending ones lost ' +
			'(the never-twice and never-lost guarantees need an append-only file)';
		if (options.requireAof) throw new RedisSettingsError(`RUNNER_REQUIRE_AOF is true and ${risk}; ${fix}`);
		log.warn({ appendonly: 'no', fix, strict: 'RUNNER_REQUIRE_AOF=true refuses to start instead' }, risk);
	}
	if (unchecked.length > 0) {
		const risk =
			`Redis persistence could not be checked: CONFIG GET appendonly was refused by ${unchecked.join(', ')}; ` +
			"make sure the provider keeps an append-only file, or the ledger's guarantees do not survive a Redis restart";
		if (options.requireAof)
			throw new RedisSettingsError(
				`RUNNER_REQUIRE_AOF is true and ${risk}; unset RUNNER_REQUIRE_AOF once you have checked it yourself`,
			);
		log.warn({ appendonly: 'unknown' }, risk);
	}
	if (withoutAof.length === 0 && unchecked.length === 0)
		log.info({ appendonly: 'yes', appendfsync: [...fsync].join(',') }, 'Redis keeps an append-only file');
}
