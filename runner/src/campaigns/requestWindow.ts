/**
 * Holds a process's requests to `limit` in every sliding window of `windowMs`, counted when they
 * leave: each waits until the limit-th request before it has left the window. Delivery tracking's
 * checks (A1 and B7 alike) go through one, because places on the tracking clock are met by timers,
 * and timers of a busy process fire late and together (benchmark 9 counted 59 checks in a second
 * at 50/s before this).
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** The window's time: a monotonic clock in ms and a wait on it (a test passes a clock of its own). */
export interface WindowClock {
	now(): number;
	sleep(ms: number): Promise<unknown>;
}
const realClock: WindowClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

export class RequestWindow {
	/** When each of the last `limit` requests left (clock.now()), oldest first. */
	private readonly left: number[] = [];

	constructor(
		private readonly limit: number,
		private readonly windowMs: number,
		private readonly clock: WindowClock = realClock,
	) {}

	/** Resolves when one more request may leave now; the request counts from then. */
	async take(): Promise<void> {
		for (;;) {
			const now = this.clock.now();
			if (this.left.length < this.limit) {
				this.left.push(now);
				return;
			}
			const wait = this.left[0] + this.windowMs - now;
			if (wait <= 0) {
				this.left.shift();
				this.left.push(now);
				return;
			}
			await this.clock.sleep(Math.ceil(wait));
		}
	}
}
