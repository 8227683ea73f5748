/**
 * The limiter that holds delivery tracking's requests to its rate: requests asked for all at once
 * (as late timers release them) leave no more than the limit in any sliding span, counted from
 * each request's answer, so a request the service was slow to read holds its slot until then. The limiter runs
 * on a clock of the test's own, so what is measured is the limiter's rule, not this machine's timers.
 */
import { RequestLimiter, type LimiterClock } from '../../runner/src/tracking/requestLimiter';
import { busiestSpan } from './support';

/** A clock that moves only when a waiter sleeps: to the latest time any waiter asked for. */
function virtualClock(): LimiterClock & { time: number } {
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

test('12 requests asked for together at a limit of 5 per 200 ms leave 5 at once, 5 a span later, then 2', async () => {
	const clock = virtualClock();
	const limiter = new RequestLimiter(5, 200, clock);
	const left: number[] = [];
	await Promise.all(Array.from({ length: 12 }, () => limiter.through(async () => left.push(clock.now()))));
	left.sort((a, b) => a - b);
	expect(left).toEqual([0, 0, 0, 0, 0, 200, 200, 200, 200, 200, 400, 400]);
	expect(busiestSpan(left, 200).count).toBe(5);
});

test('a limiter whose span has emptied lets a full burst leave at once', async () => {
	const clock = virtualClock();
	const limiter = new RequestLimiter(3, 100, clock);
	const answered = async () => undefined;
	for (let i = 0; i < 3; i++) await limiter.through(answered);
	clock.time = 120;
	for (let i = 0; i < 3; i++) await limiter.through(answered);
	expect(clock.now()).toBe(120);
	// The fourth of this burst waits for the first of it to leave the span.
	await limiter.through(answered);
	expect(clock.now()).toBe(220);
});

test('a request answered late holds its slot until a span after its answer; one still in flight holds it until answered', async () => {
	// The service received it before it answered: counted from the leaving, the next request could
	// reach the service less than a span after it (a stall on the way on a loaded machine).
	const clock = virtualClock();
	const limiter = new RequestLimiter(2, 100, clock);
	const left: number[] = [];
	const slow = limiter.through(async () => {
		left.push(clock.now());
		await clock.sleep(50);
	});
	await limiter.through(async () => left.push(clock.now()));
	const third = limiter.through(async () => left.push(clock.now()));
	await slow;
	await third;
	expect(left).toEqual([0, 0, 150]);
	// A request that fails frees its slot as an answered one does: the next leaves a span after it.
	await limiter.through(async () => Promise.reject(new Error('refused'))).catch(() => undefined);
	await limiter.through(async () => undefined);
	expect(clock.now()).toBe(250);
});
