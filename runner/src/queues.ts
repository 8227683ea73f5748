/**
 * Every queue, worker and scheduler of the runner (their processors are wired in runtime.ts):
 *
 *   control            one queue: the feeder tick (a job scheduler, every second), one-off campaign
 *                      starts (`--at`, a delayed job) and cron runs (a job scheduler per schedule)
 *   send-<number>      one queue per sending business number, with a GLOBAL rate limit in Redis:
 *                      the channel's ceiling is per number, so every process sending from that
 *                      number shares it, and numbers do not slow each other
 *   reindex            one job per reindex run (and a job scheduler per cron schedule): the process
 *                      that takes it reads the source and paces the run's upserts itself
 *                      (reindex/pace.ts; the collection lease makes it the only one); a killed
 *                      process's run stalls and is taken up again by another within seconds
 *   events             one job per event and webhook (webhooks/): the dispatcher adds them from
 *                      the outbox on the feeder tick (job id = event id + webhook id, so an event
 *                      is queued once per webhook); a failed delivery is retried with exponential
 *                      backoff. Only processes that can sign (RUNNER_WEBHOOK_KEY or RUNNER_TOKEN)
 *                      work it.
 *
 * Every process (`start` or `worker`) works every queue, so whatever a killed process was doing
 * is taken up by any process still running. Job ids and the ledger make repeats harmless.
 */
import { Queue, Worker, type ConnectionOptions, type Job, type JobsOptions, type Processor } from 'bullmq';
import { backoffMs, type Backoff } from 'convo-contract';

import type { RunnerConfig } from './config';
import { throttledWarn, type Logger } from './log';
import type { RedisConnection } from './redis';
import type { Keys } from './keys';

const CONTROL_QUEUE = 'control';
const FEEDER_SCHEDULER_ID = 'feeder';
const FEED_EVERY_MS = 1000;
const sendQueueName = (from: string) => `send-${from}`;
const REINDEX_QUEUE = 'reindex';
const EVENTS_QUEUE = 'events';
/**
 * Deliveries one process makes at once: waiting on receivers costs sockets, not CPU, and a webhook
 * holds at most one of them (webhooks/deliver.ts), so up to this many receivers that hang still
 * leave the others theirs.
 */
const EVENTS_CONCURRENCY = 50;
/** Runs one process works at once (each reads its own source). */
const REINDEX_CONCURRENCY = 2;
/**
 * A run's job lock is renewed by its process while the run lives; a killed process's run is seen
 * stalled within about 15 s and resumed elsewhere. It may be resumed this many times.
 */
/**
 * A stalled send is re-run once, and the ledger turns its claim into `unknown` instead of sending.
 * Locks are half BullMQ's defaults: a send ends within its 10 s deadline, and a dead process's
 * jobs (whose ids keep those recipients from being fed again) come back within about 30 s, not 60.
 */
const SEND_WORKER = { maxStalledCount: 1, lockDuration: 15_000, stalledInterval: 15_000 };
const REINDEX_WORKER = { lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 10 };
/** A delivery ends within its 10 s deadline; a stalled one is simply delivered again (at least once). */
const EVENTS_WORKER = { lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 2 };

/**
 * The backoffs of retried jobs, by name: a job names its own (`backoff: jobBackoff('send')`) and
 * every worker computes the wait with the one formula of the node and the runner (backoffMs).
 */
const JOB_BACKOFFS = {
	/** Sends: 1 s, 2 s, 4 s ..., each up to half shorter at random, so failures of a burst do not come back as one. */
	send: { firstMs: 1000, jitter: 0.5 },
	/** Deliveries: 1 s, 2 s, 4 s ... */
	delivery: { firstMs: 1000 },
	/** A start job waiting for its campaign's commit (campaigns/control.ts): 2 s, 4 s, 8 s ... */
	commitWait: { firstMs: 2000 },
} satisfies Record<string, Backoff>;

type JobBackoffName = keyof typeof JOB_BACKOFFS;

export function jobBackoff(name: JobBackoffName): { type: JobBackoffName } {
	return { type: name };
}

function jobBackoffStrategy(attemptsMade: number, type?: string): number {
	if (!type || !(type in JOB_BACKOFFS)) throw new Error(`no backoff named ${String(type)}`);
	return backoffMs(JOB_BACKOFFS[type as JobBackoffName], attemptsMade);
}

/** Send jobs: the ledger is the record of what happened, so BullMQ keeps no finished job (a kept one would block its id). */
export function sendJobOptions(config: RunnerConfig): JobsOptions {
	return {
		attempts: config.RUNNER_SEND_ATTEMPTS,
		backoff: jobBackoff('send'),
		removeOnComplete: true,
		removeOnFail: true,
	};
}

/**
 * Deliveries: 1 s, 2 s, 4 s ... between attempts. Finished jobs are kept an hour, so an event handed
 * over again by a dispatcher that died half-way still finds its job id taken; failed ones a week, to look at.
 */
export function eventJobOptions(config: RunnerConfig): JobsOptions {
	return {
		attempts: config.RUNNER_WEBHOOK_ATTEMPTS,
		backoff: jobBackoff('delivery'),
		removeOnComplete: { age: 3600, count: 10_000 },
		removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
	};
}

/**
 * A rate as BullMQ's limiter wants it, in slices of about 50 ms: 60/s is 3 per 50 ms, so the sends
 * spread across the second instead of bursting at its start, and a slice delayed on its way (a
 * busy event loop) bunches with the next by a few sends, not by a tenth of the rate.
 */
function limiterFor(ratePerSecond: number): { max: number; duration: number } {
	const max = Math.max(1, Math.floor(ratePerSecond / 20));
	return { max, duration: Math.round((1000 * max) / ratePerSecond) };
}

export class Queues {
	readonly control: Queue;
	readonly reindex: Queue;
	readonly events: Queue;
	private readonly sends = new Map<string, Queue>();
	private readonly appliedRates = new Map<string, number>();

	private readonly warn?: ReturnType<typeof throttledWarn>;

	constructor(
		private readonly connection: RedisConnection,
		readonly keys: Keys,
		log?: Logger,
	) {
		this.warn = log ? throttledWarn(log) : undefined;
		this.control = this.open(CONTROL_QUEUE);
		this.reindex = this.open(REINDEX_QUEUE);
		this.events = this.open(EVENTS_QUEUE);
	}

	private open(name: string): Queue {
		const queue = new Queue(name, { connection: this.connection as ConnectionOptions, prefix: this.keys.prefix });
		// Without a listener an unreachable Redis prints a raw stack per attempt.
		queue.on('error', (error: Error) => this.warn?.(`queue:${error.message}`, { queue: name, err: error.message }, 'queue cannot reach Redis'));
		return queue;
	}

	send(from: string): Queue {
		let queue = this.sends.get(from);
		if (!queue) {
			queue = this.open(sendQueueName(from));
			this.sends.set(from, queue);
		}
		return queue;
	}

	/** Sets the number's shared limit (stored in Redis, read by every worker of that queue). */
	async applyRate(from: string, ratePerSecond: number): Promise<void> {
		if (this.appliedRates.get(from) === ratePerSecond) return;
		const { max, duration } = limiterFor(ratePerSecond);
		await this.send(from).setGlobalRateLimit(max, duration);
		this.appliedRates.set(from, ratePerSecond);
	}

	/** The feeder tick: one scheduler in Redis however many processes upsert it. */
	async ensureFeeder(): Promise<void> {
		await this.control.upsertJobScheduler(FEEDER_SCHEDULER_ID, { every: FEED_EVERY_MS }, { name: 'feed', opts: { removeOnComplete: true, removeOnFail: 50 } });
	}

	async close(): Promise<void> {
		await Promise.all([this.control.close(), this.reindex.close(), this.events.close(), ...[...this.sends.values()].map((queue) => queue.close())]);
	}
}

export interface Processors {
	control: Processor;
	send: Processor;
	reindex: Processor;
	/** Absent in a process that cannot sign deliveries. */
	events?: Processor;
}

/**
 * The workers of one process: control, reindex, events (when the process can sign deliveries), and
 * a send worker for every number that has a queue (new numbers are picked up within a second of
 * their first campaign).
 */
export class Workers {
	private readonly workers = new Map<string, Worker>();
	private timer?: NodeJS.Timeout;
	private closing = false;
	private readonly warn: ReturnType<typeof throttledWarn>;

	constructor(
		private readonly connection: RedisConnection,
		private readonly keys: Keys,
		private readonly config: RunnerConfig,
		private readonly processors: Processors,
		private readonly log: Logger,
	) {
		this.warn = throttledWarn(log);
	}

	async start(): Promise<void> {
		this.add(CONTROL_QUEUE, this.processors.control, 1);
		this.add(REINDEX_QUEUE, this.processors.reindex, REINDEX_CONCURRENCY, REINDEX_WORKER);
		if (this.processors.events) this.add(EVENTS_QUEUE, this.processors.events, EVENTS_CONCURRENCY, EVENTS_WORKER);
		await this.discover();
		this.timer = setInterval(() => void this.discover().catch((error: Error) => this.warn(`discover:${error.message}`, { err: error.message }, 'could not list sending numbers')), 1000);
	}

	private add(name: string, processor: Processor, concurrency: number, lock: Partial<typeof SEND_WORKER> = SEND_WORKER): void {
		const worker = new Worker(name, processor, {
			connection: this.connection as ConnectionOptions,
			prefix: this.keys.prefix,
			concurrency,
			settings: { backoffStrategy: jobBackoffStrategy },
			...lock,
		});
		worker.on('error', (error) => this.warn(`worker:${error.message}`, { queue: name, err: error.message }, 'worker error'));
		worker.on('failed', (job: Job | undefined, error: Error) => {
			if (name === CONTROL_QUEUE || name === REINDEX_QUEUE) this.log.warn({ queue: name, job: job?.name, err: error.message }, 'job failed');
		});
		this.workers.set(name, worker);
	}

	private async discover(): Promise<void> {
		if (this.closing) return;
		for (const from of await this.connection.smembers(this.keys.numbers)) {
			const name = sendQueueName(from);
			if (!this.workers.has(name)) this.add(name, this.processors.send, this.config.RUNNER_CONCURRENCY);
		}
	}

	/** Stops fetching, lets active jobs finish within `deadlineMs`, then forces the rest closed. */
	async close(deadlineMs: number): Promise<boolean> {
		this.closing = true;
		if (this.timer) clearInterval(this.timer);
		const all = [...this.workers.values()];
		let timer: NodeJS.Timeout | undefined;
		const timedOut = await Promise.race([
			Promise.all(all.map((worker) => worker.close())).then(() => false),
			new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), deadlineMs))),
		]);
		clearTimeout(timer);
		if (timedOut) await Promise.all(all.map((worker) => worker.close(true)));
		return !timedOut;
	}
}
