/**
 * The window that holds delivery tracking's requests to its rate: requests asked for all at once
 * (as late timers release them) leave no more than the limit in any sliding window.
 */
import { RequestWindow } from '../../runner/src/campaigns/requestWindow';

/** The most entries of `times` (ms, sorted) within any window of `windowMs`. */
function busiest(times: number[], windowMs: number): number {
	let most = 0;
	for (let first = 0, last = 0; last < times.length; last++) {
		while (times[last] - times[first] >= windowMs) first++;
		most = Math.max(most, last - first + 1);
	}
	return most;
}

test('12 requests asked for together at a limit of 5 per 200 ms leave 5, then 5 a window later, then 2', async () => {
	const window = new RequestWindow(5, 200);
	const started = performance.now();
	const left: number[] = [];
	await Promise.all(Array.from({ length: 12 }, () => window.take().then(() => left.push(performance.now() - started))));
	left.sort((a, b) => a - b);
	expect(busiest(left, 200)).toBe(5);
	expect(left[4]).toBeLessThan(50);
	expect(left[5]).toBeGreaterThanOrEqual(200);
	expect(left[10]).toBeGreaterThanOrEqual(400);
});

test('a window that has emptied lets a full burst leave at once', async () => {
	const window = new RequestWindow(3, 100);
	for (let i = 0; i < 3; i++) await window.take();
	await new Promise((resolve) => setTimeout(resolve, 120));
	const started = performance.now();
	for (let i = 0; i < 3; i++) await window.take();
	expect(performance.now() - started).toBeLessThan(50);
});
