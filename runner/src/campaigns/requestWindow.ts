/**
 * Holds a process's requests to `limit` in every sliding window of `windowMs`, counted when they
 * leave: each waits until the limit-th request before it has left the window. Delivery tracking's
 * checks (A1 and B7 alike) go through one, because places on the tracking clock are met by timers,
 * and timers of a busy process fire late and together (benchmark 9 counted 59 checks in a second
 * at 50/s before this).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export class RequestWindow {
	/** When each of the last `limit` requests left (performance.now()), oldest first. */
	private readonly left: number[] = [];

	constructor(
		private readonly limit: number,
		private readonly windowMs: number,
	) {}

	/** Resolves when one more request may leave now; the request counts from then. */
	async take(): Promise<void> {
		for (;;) {
			const now = performance.now();
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
			await sleep(Math.ceil(wait));
		}
	}
}
