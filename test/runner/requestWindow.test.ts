/**
 * The window that holds delivery tracking's requests to its rate: requests asked for all at once
 * (as late timers release them) leave no more than the limit in any sliding window. The window runs
 * on a clock of the test's own, so what is measured is the window's rule, not this machine's timers.
 */
import { RequestWindow, type WindowClock } from '../../runner/src/campaigns/requestWindow';

/** A clock that moves only when a waiter sleeps: to the latest time any waiter asked for. */
function virtualClock(): WindowClock & { time: number } {
	const clock = {
		time: 0,
		now: () => clock.time,
		sleep: async (ms: number) => {
			const until = clock.time + ms;
			await Promise.resolve();
			clock.time = Math.max(clock.time, until);
		},
	};
	return clock;
}

/** The most entries of `times` (ms, sorted) within any window of `windowMs`. */
function busiest(times: number[], windowMs: number): number {
	let most = 0;
	for (let first = 0, last = 0; last < times.length; last++) {
		while (times[last] - times[first] >= windowMs) first++;
		most = Math.max(most, last - first + 1);
	}
	return most;
}

test('12 requests asked for together at a limit of 5 per 200 ms leave 5 at once, 5 a window later, then 2', async () => {
	const clock = virtualClock();
	const window = new RequestWindow(5, 200, clock);
	const left: number[] = [];
	await Promise.all(Array.from({ length: 12 }, () => window.take().then(() => left.push(clock.now()))));
	left.sort((a, b) => a - b);
	expect(left).toEqual([0, 0, 0, 0, 0, 200, 200, 200, 200, 200, 400, 400]);
	expect(busiest(left, 200)).toBe(5);
});

test('a window that has emptied lets a full burst leave at once', async () => {
	const clock = virtualClock();
	const window = new RequestWindow(3, 100, clock);
	for (let i = 0; i < 3; i++) await window.take();
	clock.time = 120;
	for (let i = 0; i < 3; i++) await window.take();
	expect(clock.now()).toBe(120);
	// The fourth of this burst waits for the first of it to leave the window.
	await window.take();
	expect(clock.now()).toBe(220);
});
