/**
 * A runner process: connect, open the queues and start the workers the job registry describes
 * (jobs.ts, queues.ts), process until told to stop (Redis itself is checked before, by the command:
 * cli/serve.ts). SIGTERM/SIGINT: stop taking work, let in-flight sends finish within the deadline,
 * mark any still unsettled `unknown` (never left `claimed`), exit.
 */
import type { RunnerConfig } from './config';
import type { RunnerContext } from './context';
import type { InFlight } from './sending/send';
import { shownQueueName, upsertFeeder, upsertTracker } from './jobs';
import { startHeartbeat } from './presence';
import { webhookKey } from './webhooks/secret';
import { keysFor } from './keys';
import { Ledger } from './ledger';
import type { Logger } from './log';
import { queueProcessors } from './processors';
import { Queues } from './queues';
import { Workers } from './workers';
import { connect, describeTarget, whenReady, type RedisConnection, type RedisTarget } from './redis';
import { ConvoService } from './service';
import { MAX_VOLLEY } from './sending/startGateMath';
import { ConfigError } from './config';

export function requireService(config: RunnerConfig): { externalUrl: string; apiKey: string } {
	const missing = (['CONVO_EXTERNAL_URL', 'CONVO_API_KEY'] as const).filter((name) => !config[name]);
	if (missing.length > 0)
		throw new ConfigError(
			`${missing.join(' and ')} must be set: the runner sends through the external API with its key`,
		);
	return { externalUrl: config.CONVO_EXTERNAL_URL as string, apiKey: config.CONVO_API_KEY as string };
}

export function redisTarget(config: RunnerConfig): RedisTarget {
	return {
		url: config.REDIS_URL,
		clusterNodes: config.REDIS_CLUSTER_NODES,
		clusterAuth: { username: config.REDIS_CLUSTER_USERNAME, password: config.REDIS_CLUSTER_PASSWORD },
		clusterTls: config.REDIS_CLUSTER_TLS,
	};
}

/**
 * The context every command and process works with. `withService`: this process talks to the
 * service. `client`: someone waits for each answer (CLI, HTTP API), so Redis commands fail fast
 * (redis.ts); with `waitMs` the context is returned only once Redis answers within that time (the
 * CLI), without it at once (the API answers 503 until Redis is there).
 */
export async function openContext(
	config: RunnerConfig,
	log: Logger,
	options: { withService: boolean; client?: { waitMs: number } },
): Promise<RunnerContext> {
	if (!config.REDIS_URL && !config.REDIS_CLUSTER_NODES)
		throw new ConfigError('REDIS_URL (or REDIS_CLUSTER_NODES) must be set to the Redis the runner uses');
	const messaging =
		config.CONVO_BASE_URL && config.CONVO_ACCESS_TOKEN
			? { baseUrl: config.CONVO_BASE_URL, accessToken: config.CONVO_ACCESS_TOKEN }
			: undefined;
	const service = options.withService
		? new ConvoService({
				...requireService(config),
				messaging,
				deadlineMs: config.RUNNER_HTTP_DEADLINE,
				// Every send a process may have in flight: its send jobs, each with a whole volley out.
				connections: Math.max(64, config.RUNNER_CONCURRENCY * MAX_VOLLEY),
			})
		: undefined;
	const redis: RedisConnection = connect(redisTarget(config), options.client ? 'client' : 'worker');
	if (options.client) {
		// Without a listener ioredis prints every failed reconnect; whenReady reports the last one.
		redis.on('error', () => undefined);
	}
	if (options.client && options.client.waitMs > 0) {
		try {
			await whenReady(redis, describeTarget(redisTarget(config)), options.client.waitMs);
		} catch (error) {
			redis.disconnect();
			await service?.close();
			throw error;
		}
	}
	const keys = keysFor(config.RUNNER_PREFIX);
	return { config, redis, keys, ledger: new Ledger(redis, keys), queues: new Queues(redis, keys, log), log, service };
}

// What a command that runs (or briefly uses) a runner process needs of Redis: checking it before
// the workers start, a throwaway one for --dev-redis, and telling an outage from other errors.
export { startPrivateRedis } from './devRedis';
export { checkRedis, CLIENT_READY_MS, isRedisUnavailable, RedisSettingsError, RedisUnavailable } from './redis';

/**
 * Keys of the old layout (one `{prefix}` hash tag for everything) under the prefix this one
 * would have had then: this runner neither reads nor moves them, so their campaigns would wait for
 * good. Said once at start; the two layouts must not share a Redis
 * (docs/decisions/redis/prefix-and-layout.md).
 */
export async function warnOfOldLayout(context: RunnerContext): Promise<void> {
	const old = `{${context.keys.prefix}}`;
	const found = await context.redis.exists(
		`${old}:campaigns`,
		`${old}:numbers`,
		`${old}:reindex:runs`,
		`${old}:webhooks`,
	);
	if (found > 0) {
		context.log.warn(
			{ oldKeys: `${old}:*` },
			'this Redis holds keys of an older runner (one hash tag for every key); ' +
				'this runner does not read them: let an old runner finish its campaigns first, ' +
				'and never run old and new runners on one Redis',
		);
	}
}

/** Whether Redis answers a PING within `ms`: the readiness probe's question, never thrown. */
export async function redisAnswers(context: RunnerContext, ms: number): Promise<boolean> {
	let timer: NodeJS.Timeout | undefined;
	const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
	try {
		return await Promise.race([context.redis.ping().then(() => true), late]);
	} catch {
		return false;
	} finally {
		clearTimeout(timer);
	}
}

export async function closeContext(context: RunnerContext): Promise<void> {
	await context.queues.close();
	await context.service?.close();
	context.redis.disconnect();
}

export interface RunningRunner {
	/** True while this process's workers take jobs. */
	healthy(): boolean;
	stop(): Promise<void>;
}

export async function runProcess(context: RunnerContext, role: 'start' | 'worker' = 'worker'): Promise<RunningRunner> {
	const { keys, config, log, ledger } = context;
	const inFlight = new Map<string, InFlight>();
	const shutdown = new AbortController();
	const key = webhookKey(config);
	if (!key)
		log.warn(
			'this process delivers no webhook events: set RUNNER_WEBHOOK_KEY (or RUNNER_TOKEN), ' +
				'the same on every process, to have it sign and send them',
		);
	const draining = new AbortController();
	await upsertFeeder(context);
	await upsertTracker(context);
	const workers = new Workers(
		context,
		queueProcessors({ context, inFlight, shutdown: shutdown.signal, draining: draining.signal, webhookKey: key }),
	);
	await workers.start();
	const heartbeat = await startHeartbeat(context, role, () => workers.queueNames().map(shownQueueName));
	log.info({ concurrency: config.RUNNER_CONCURRENCY, prefix: keys.prefix }, 'runner started');

	let stopped = false;
	return {
		healthy: () => !stopped,
		stop: async () => {
			stopped = true;
			draining.abort();
			await heartbeat.stop();
			log.info({ inFlight: inFlight.size }, 'stopping: no new work, waiting for sends in flight');
			// The sends get the deadline less a margin in which their claims are settled (the process
			// exits at the deadline whatever happens: cli/serve.ts).
			const clean = await workers.close(
				config.RUNNER_SHUTDOWN_DEADLINE - Math.min(2000, config.RUNNER_SHUTDOWN_DEADLINE / 4),
			);
			if (!clean) shutdown.abort();
			for (const claim of inFlight.values()) {
				await ledger.settle(
					claim.campaign,
					claim.index,
					claim.token,
					'unknown',
					'',
					'the runner stopped while this send was in flight',
					config.RUNNER_PAUSE_AFTER_FAILURES,
				);
			}
			log.info({ clean }, 'runner stopped');
		},
	};
}
