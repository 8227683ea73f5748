/**
 * The BullMQ queues of one process, opened as the registry (jobs.ts) describes them: what producers
 * add to and what bull-board and /metrics read. The workers that take their jobs are in workers.ts.
 */
import { Queue, type ConnectionOptions } from 'bullmq';

import { limiterFor, QUEUES, type QueueSpec, type SharedQueue } from './jobs';
import { throttledWarn, type Logger } from './log';
import type { RedisConnection } from './redis';
import type { Keys } from './keys';

export type PerNumberSpec = QueueSpec & { name: (from: string) => string };

/** The registry's queues: one each of the shared ones, one per sending number of the others. */
const PER_NUMBER = Object.values(QUEUES as Record<string, QueueSpec>).filter(
	(spec): spec is PerNumberSpec => typeof spec.name === 'function',
);
const SHARED = (Object.keys(QUEUES) as Array<keyof typeof QUEUES>).filter(
	(kind): kind is SharedQueue => typeof QUEUES[kind].name === 'string',
);

/** Where a queue's keys are, the same for its queue and its workers. */
export function bullOptions(
	connection: RedisConnection,
	keys: Keys,
): { connection: ConnectionOptions; prefix: string } {
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
			queue.on('error', (error: Error) =>
				this.warn?.(`queue:${error.message}`, { queue: name, err: error.message }, 'queue cannot reach Redis'),
			);
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

	/**
	 * Every queue of the registry: the shared ones, then each number's
	 * send queue by number (what bull-board and /metrics show).
	 */
	async all(): Promise<Queue[]> {
		const numbers = (await this.connection.smembers(this.keys.numbers)).sort();
		return [
			...SHARED.map((kind) => this.shared(kind)),
			...PER_NUMBER.flatMap((spec) => numbers.map((from) => this.open(spec.name(from)))),
		];
	}

	async close(): Promise<void> {
		await Promise.all([...this.opened.values()].map((queue) => queue.close()));
	}
}
