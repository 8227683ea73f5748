/**
 * Holds a process's requests to `limit` in every sliding span of `spanMs` as the service
 * receives them: a request leaves only once the limit-th request before it was answered at least
 * `spanMs` ago. Delivery tracking's checks (A1 and B7 alike) go through one, because places on
 * the tracking clock are met by timers, and timers of a busy process fire late and together
 * (59 checks in a second at 50/s without it). Counted from the answer, not
 * from when the request left: the service received a request before it answered it, so a stall on
 * the way (this process or the service slow to read it, on a loaded machine) can only widen the
 * gap the service sees. Counted from the leaving, a request read 100 ms late by the sandbox made
 * 6 in 948 ms at 5/s.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** The limiter's time: a monotonic clock in ms and a wait on it (a test passes a clock of its own). */
export interface LimiterClock {
	now(): number;
	sleep(ms: number): Promise<unknown>;
}
const realClock: LimiterClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

interface Slot {
	/** When the request was answered (clock.now()); undefined while it is in flight. */
	answeredAt?: number;
	answered: Promise<void>;
}

export class RequestLimiter {
	/** The last `limit` requests, in the order they left. */
	private readonly slots: Slot[] = [];

	constructor(
		private readonly limit: number,
		private readonly spanMs: number,
		private readonly clock: LimiterClock = realClock,
	) {}

	/** Makes `request` once the limit lets it leave; its slot counts until its answer (or failure) and a span after. */
	async through<T>(request: () => Promise<T>): Promise<T> {
		const answered = await this.take();
		try {
			return await request();
		} finally {
			answered();
		}
	}

	/** Resolves when one more request may leave now; call what it returns when its answer came. */
	async take(): Promise<() => void> {
		for (;;) {
			if (this.slots.length >= this.limit) {
				const oldest = this.slots[0];
				if (oldest.answeredAt === undefined) {
					await oldest.answered;
					continue;
				}
				const wait = oldest.answeredAt + this.spanMs - this.clock.now();
				if (wait > 0) {
					await this.clock.sleep(Math.ceil(wait));
					continue;
				}
				this.slots.shift();
			}
			let markAnswered: () => void = () => undefined;
			const slot: Slot = { answered: new Promise<void>((resolve) => (markAnswered = resolve)) };
			this.slots.push(slot);
			return () => {
				if (slot.answeredAt !== undefined) return;
				slot.answeredAt = this.clock.now();
				markAnswered();
			};
		}
	}
}
