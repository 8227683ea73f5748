/**
 * The BullMQ workers of one process, built from the registry's queues (jobs.ts) and the processors
 * the process works them with (processors.ts).
 */
import { Worker, type Job, type Processor } from 'bullmq';

import type { RunnerContext } from './context';
import { jobBackoffStrategy, QUEUES, type QueueKind, type QueueSpec } from './jobs';
import { throttledWarn } from './log';
import { bullOptions, type PerNumberSpec } from './queues';

/**
 * Minutes of per-minute figures BullMQ keeps per queue for its finished jobs. Its workers count a
 * completed or failed job (the counters /metrics exports) only with these figures on; an hour keeps
 * each list small, and the counters themselves do not depend on it.
 */
const QUEUE_METRICS_MINUTES = 60;

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
		this.timer = setInterval(
			() =>
				void this.discover().catch((error: Error) =>
					this.warn(`discover:${error.message}`, { err: error.message }, 'could not list sending numbers'),
				),
			1000,
		);
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
			settings: { backoffStrategy: jobBackoffStrategy(context.config) },
			metrics: { maxDataPoints: QUEUE_METRICS_MINUTES },
			...spec.locks(context.config),
		});
		worker.on('error', (error) =>
			this.warn(`worker:${error.message}`, { queue: name, err: error.message }, 'worker error'),
		);
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
