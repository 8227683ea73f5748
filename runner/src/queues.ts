/**
 * The BullMQ objects of one process, opened as the registry (jobs.ts) describes them: its queues
 * (what producers add to and what bull-board and /metrics read) and its workers.
 */
import { Queue, Worker, type ConnectionOptions, type Job, type Processor } from 'bullmq';

import type { RunnerContext } from './context';
import { jobBackoffStrategy, limiterFor, QUEUES, type QueueKind, type QueueSpec, type SharedQueue } from './jobs';
import { throttledWarn, type Logger } from './log';
import type { RedisConnection } from './redis';
import type { Keys } from './keys';

type PerNumberSpec = QueueSpec & { name: (from: string) => string };

/** The registry's queues: one each of the shared ones, one per sending number of the others. */
const PER_NUMBER = Object.values(QUEUES as Record<string, QueueSpec>).filter((spec): spec is PerNumberSpec => typeof spec.name === 'function');
const SHARED = (Object.keys(QUEUES) as Array<keyof typeof QUEUES>).filter((kind): kind is SharedQueue => typeof QUEUES[kind].name === 'string');

/**
 * Minutes of per-minute figures BullMQ keeps per queue for its finished jobs. Its workers count a
 * completed or failed job (the counters /metrics exports) only with these figures on; an hour keeps
 * each list small, and the counters themselves do not depend on it.
 */
const QUEUE_METRICS_MINUTES = 60;

/** Where a queue's keys are, the same for its queue and its workers. */
function bullOptions(connection: RedisConnection, keys: Keys): { connection: ConnectionOptions; prefix: string } {
	return { connection: connection as ConnectionOptions, prefix: keys.prefix };
}

export class Queues {
	private readonly opened = new Map<string, Queue>();
	private readonly appliedRates = new Map<string, number>();
	private readonly warn?: ReturnType<typeof throttledWarn>;

	constructor(
		private readonly connection: RedisConnection,
		private readonly keys: Keys,
		log?: Logger,
	) {
		this.warn = log ? throttledWarn(log) : undefined;
		for (const kind of SHARED) this.shared(kind);
	}

	private open(name: string): Queue {
		let queue = this.opened.get(name);
		if (!queue) {
			queue = new Queue(name, bullOptions(this.connection, this.keys));
			// Without a listener an unreachable Redis prints a raw stack per attempt.
			queue.on('error', (error: Error) => this.warn?.(`queue:${error.message}`, { queue: name, err: error.message }, 'queue cannot reach Redis'));
			this.opened.set(name, queue);
		}
		return queue;
	}

	shared(kind: SharedQueue): Queue {
		return this.open(QUEUES[kind].name);
	}

	get control(): Queue {
		return this.shared('control');
	}

	get reindex(): Queue {
		return this.shared('reindex');
	}

	get events(): Queue {
		return this.shared('events');
	}

	send(from: string): Queue {
		return this.open(QUEUES.send.name(from));
	}

	/** Sets the number's shared limit (stored in Redis, read by every worker of that queue). */
	async applyRate(from: string, ratePerSecond: number): Promise<void> {
		if (this.appliedRates.get(from) === ratePerSecond) return;
		const { max, duration } = limiterFor(ratePerSecond);
		await this.send(from).setGlobalRateLimit(max, duration);
		this.appliedRates.set(from, ratePerSecond);
	}

	/** Every queue of the registry: the shared ones, then each number's send queue by number (what bull-board and /metrics show). */
	async all(): Promise<Queue[]> {
		const numbers = (await this.connection.smembers(this.keys.numbers)).sort();
		return [...SHARED.map((kind) => this.shared(kind)), ...PER_NUMBER.flatMap((spec) => numbers.map((from) => this.open(spec.name(from))))];
	}

	async close(): Promise<void> {
		await Promise.all([...this.opened.values()].map((queue) => queue.close()));
	}
}

/**
 * The workers of one process: one per shared queue whose kinds it works, and one per number's send
 * queue, picked up within a second of the number's first campaign.
 */
export class Workers {
	private readonly workers = new Map<string, Worker>();
	private readonly perNumber: Array<{ spec: PerNumberSpec; processor: Processor }> = [];
	private timer?: NodeJS.Timeout;
	private closing = false;
	private readonly warn: ReturnType<typeof throttledWarn>;

	/** `processors`: each queue's processor in this process (processors.ts); a queue without one is not worked. */
	constructor(
		private readonly context: RunnerContext,
		private readonly processors: Partial<Record<QueueKind, Processor>>,
	) {
		this.warn = throttledWarn(context.log);
	}

	async start(): Promise<void> {
		for (const kind of Object.keys(QUEUES) as QueueKind[]) {
			const processor = this.processors[kind];
			if (!processor) continue;
			const spec: QueueSpec = QUEUES[kind];
			if (typeof spec.name === 'string') this.add(spec.name, spec, processor);
			else this.perNumber.push({ spec: { ...spec, name: spec.name }, processor });
		}
		await this.discover();
		this.timer = setInterval(() => void this.discover().catch((error: Error) => this.warn(`discover:${error.message}`, { err: error.message }, 'could not list sending numbers')), 1000);
	}

	/** The queues this process's workers take jobs from now (the heartbeat shows them: presence.ts). */
	queueNames(): string[] {
		return [...this.workers.keys()];
	}

	private add(name: string, spec: QueueSpec, processor: Processor): void {
		const { context } = this;
		const worker = new Worker(name, processor, {
			...bullOptions(context.redis, context.keys),
			concurrency: spec.concurrency(context.config),
			settings: { backoffStrategy: jobBackoffStrategy },
			metrics: { maxDataPoints: QUEUE_METRICS_MINUTES },
			...spec.locks,
		});
		worker.on('error', (error) => this.warn(`worker:${error.message}`, { queue: name, err: error.message }, 'worker error'));
		worker.on('failed', (job: Job | undefined, error: Error) => {
			if (spec.logFailures) context.log.warn({ queue: name, job: job?.name, err: error.message }, 'job failed');
		});
		this.workers.set(name, worker);
	}

	private async discover(): Promise<void> {
		if (this.closing || this.perNumber.length === 0) return;
		const { redis, keys } = this.context;
		for (const from of await redis.smembers(keys.numbers)) {
			for (const { spec, processor } of this.perNumber) {
				const name = spec.name(from);
				if (!this.workers.has(name)) this.add(name, spec, processor);
			}
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
