/**
 * The per-number start gate of campaigns/spacing.ts against real Redis, without the service in
 * between: starts are spaced 1 / min(0.98 × rate, the window's cap) apart however many callers ask at once; starts
 * that bunch (late wakers, simulated by resetting the spacing clock) are held to the window's cap
 * in any sliding second; a 429's hold delays the next start; a stop abandons the wait without
 * taking a start; a send of a campaign not running takes none either. (The sandbox-counted rate
 * of whole campaigns is rate.test.ts and the benchmark; what a stopped campaign's queued jobs cost
 * the others is deadjobs.test.ts.)
 */
import { HEADROOM, holdStarts, setSpacingRate, waitForStart, windowCap } from '../../runner/src/campaigns/spacing';
import { useRunnerUnderTest } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();
let numbers = 0;
/** A number of its own, and a running campaign on it whose sends these are. */
async function newSender(): Promise<{ from: string; campaign: string }> {
	const sender = { from: `49300${process.pid}${numbers}`, campaign: `cspacing${numbers++}` };
	await runner.context.redis.hset(runner.context.keys.campaign(sender.campaign), 'state', 'running');
	return sender;
}
const never = new AbortController().signal;

/** The most timestamps in any window [t, t + 1000 ms). */
function mostInASecond(times: number[]): number {
	const sorted = [...times].sort((a, b) => a - b);
	let most = 0;
	for (let end = 0, start = 0; end < sorted.length; end++) {
		while (sorted[end] - sorted[start] >= 1000) start++;
		most = Math.max(most, end - start + 1);
	}
	return most;
}

test('60 callers at once at 40/s start one by one, 1 / min(0.98 x 40, the cap) s apart, never more than the cap in a second', async () => {
	const sender = await newSender();
	const { from } = sender;
	await setSpacingRate(runner.context, from, 40);
	const started = Date.now();
	// Start times as the gate took them, on Redis's clock (what the window counts).
	const times = (await Promise.all(Array.from({ length: 60 }, (_, i) => waitForStart(runner.context, sender, `job-${i}`, never)))) as number[];
	const span = Date.now() - started;
	const gap = 1000 / Math.min(40 * HEADROOM, windowCap(40));
	expect(span).toBeGreaterThanOrEqual(59 * gap - 50);
	expect(mostInASecond(times)).toBeLessThanOrEqual(windowCap(40));
	const sorted = [...times].sort((a, b) => a - b);
	const closest = Math.min(...sorted.slice(1).map((time, i) => time - sorted[i]));
	// Evenly spread, not in bursts: no two starts of 60 closer than half the gap (timers wake a little late or early).
	expect(closest).toBeGreaterThanOrEqual(gap / 2 - 5);
});

test('starts that bunch (the spacing clock lost) are held to the cap of a sliding second', async () => {
	const sender = await newSender();
	const { from } = sender;
	await setSpacingRate(runner.context, from, 20);
	const times: number[] = [];
	for (let i = 0; i < 30; i++) {
		await runner.context.redis.hdel(runner.context.keys.spacing(from), 'next');
		times.push((await waitForStart(runner.context, sender, `late-${i}`, never)) as number);
	}
	const cap = windowCap(20);
	expect(cap).toBe(19);
	expect(mostInASecond(times)).toBeLessThanOrEqual(cap);
	// The first `cap` pass at once; the next waits for the first to leave the window.
	expect(times[cap - 1] - times[0]).toBeLessThan(500);
	expect(times[cap] - times[0]).toBeGreaterThanOrEqual(950);
});

test("a 429's hold delays the number's next start; a stop leaves the wait without taking a start", async () => {
	const sender = await newSender();
	const { from } = sender;
	await setSpacingRate(runner.context, from, 100);
	await waitForStart(runner.context, sender, 'first', never);
	const held = Date.now();
	await holdStarts(runner.context, from, 600);
	await waitForStart(runner.context, sender, 'after-hold', never);
	expect(Date.now() - held).toBeGreaterThanOrEqual(550);

	const full = await newSender();
	await setSpacingRate(runner.context, full.from, 1);
	await waitForStart(runner.context, full, 'only', never);
	const stop = new AbortController();
	setTimeout(() => stop.abort(), 200);
	expect(await waitForStart(runner.context, full, 'stopped', stop.signal)).toBe('stopped');
	expect(await runner.context.redis.zrange(runner.context.keys.startLog(full.from), 0, -1)).toEqual(['only']);
});

test('a number with no rate set yet starts at once', async () => {
	const sender = await newSender();
	const started = Date.now();
	for (let i = 0; i < 20; i++) await waitForStart(runner.context, sender, `free-${i}`, never);
	expect(Date.now() - started).toBeLessThan(1000);
});

test('a send of a campaign not running takes no start; one paused while it waits for its start takes none either', async () => {
	const { redis, keys } = runner.context;
	const sender = await newSender();
	await setSpacingRate(runner.context, sender.from, 1);
	await redis.hset(keys.campaign(sender.campaign), 'state', 'paused');
	expect(await waitForStart(runner.context, sender, 'dead', never)).toBe('not running');
	expect(await redis.hget(keys.spacing(sender.from), 'next')).toBeNull();
	expect(await redis.zcard(keys.startLog(sender.from))).toBe(0);

	// Running: the first starts now, the second waits about a second for its time; paused meanwhile, it takes no start.
	await redis.hset(keys.campaign(sender.campaign), 'state', 'running');
	await waitForStart(runner.context, sender, 'first', never);
	const waiting = waitForStart(runner.context, sender, 'second', never);
	await new Promise((resolve) => setTimeout(resolve, 300));
	await redis.hset(keys.campaign(sender.campaign), 'state', 'cancelled');
	expect(await waiting).toBe('not running');
	expect(await redis.zrange(keys.startLog(sender.from), 0, -1)).toEqual(['first']);
});
