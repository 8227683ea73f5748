/**
 * Pacing of one run's upserts, in the process that holds the run (the collection lease makes it
 * the only one): start times spaced 1/rate apart, a 429's Retry-After holds every upsert of the
 * run, and at most `limit` calls are in flight.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export class Pacer {
	private next = 0;
	private readonly gapMs: number;

	constructor(ratePerSecond: number) {
		this.gapMs = 1000 / ratePerSecond;
	}

	/** Waits for this call's start time. */
	async slot(): Promise<void> {
		const now = Date.now();
		const at = Math.max(now, this.next);
		this.next = at + this.gapMs;
		if (at > now) await sleep(at - now);
	}

	/** The service said 429: nothing of this run starts before `waitMs` from now. */
	hold(waitMs: number): void {
		this.next = Math.max(this.next, Date.now() + waitMs);
	}
}

export class Pool {
	private readonly active = new Set<Promise<void>>();
	/** The first error a task threw (Redis gone): the next run() or drain() throws it. */
	private failure?: Error;

	constructor(private readonly limit: number) {}

	/** Starts `task` once fewer than `limit` run (so a reader awaiting this is held back). */
	async run(task: () => Promise<void>): Promise<void> {
		while (this.active.size >= this.limit) await Promise.race(this.active);
		if (this.failure) throw this.failure;
		const running: Promise<void> = task()
			.catch((error: Error) => {
				this.failure ??= error;
			})
			.finally(() => this.active.delete(running));
		this.active.add(running);
	}

	async drain(): Promise<void> {
		while (this.active.size > 0) await Promise.race(this.active);
		if (this.failure) throw this.failure;
	}
}
