// @serial: measures the spacing of starts per number in wall time
/**
 * The per-number start gate of sending/spacing.ts against real Redis, without the service in
 * between: starts take places 1.04 s / rate apart however many callers ask at once, so 0.96 of the
 * rate passes at any rate, 4/s as 40/s; starts that bunch (late wakers, simulated by resetting the
 * spacing clock) are held to the rate in any span of 1.04 s; a 429's hold delays the next start;
 * a stop abandons the wait without taking a start; a send of a campaign not running takes none
 * either, and the places a stopped campaign's waiting sends held are given back (restartSpacing),
 * a 429's hold excepted. (The sandbox-counted rate of whole campaigns is rate.test.ts and the benchmarks; what a
 * stopped campaign's queued jobs cost the others is deadjobs.test.ts.)
 */
import { Writable } from 'node:stream';

import type { Redis } from 'ioredis';

import {
	FRESH_START_MS,
	holdStarts,
	restartSpacing,
	secondCap,
	setSpacingRate,
	startNextInJob,
	takeStartAgain,
	waitForStart,
	RATE_SPAN_MS,
	rateSpanMs,
	gateRate,
} from '../../runner/src/sending/spacing';
import { createCampaign } from '../../runner/src/core/campaigns';
import { placeLateMs } from '../../runner/src/sending/startGateMath';
import { createLogger } from '../../runner/src/log';
import { inlineRecords } from '../../runner/src/source';
import { monitorCommands, positionalTemplate, useRunnerUnderTest } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();
let numbers = 0;
/** A number of its own, and a running campaign on it whose sends these are. */
async function newSender(): Promise<{ from: string; campaign: string }> {
	const sender = { from: `49300${process.pid}${numbers}`, campaign: `cspacing${numbers++}` };
	await runner.context.redis.hset(runner.context.keys.campaign(sender.from, sender.campaign), 'state', 'running');
	return sender;
}
const never = new AbortController().signal;

/** The most timestamps in any span [t, t + spanMs). */
function mostIn(times: number[], spanMs: number): number {
	const sorted = [...times].sort((a, b) => a - b);
	let most = 0;
	for (let end = 0, start = 0; end < sorted.length; end++) {
		while (sorted[end] - sorted[start] >= spanMs) start++;
		most = Math.max(most, end - start + 1);
	}
	return most;
}

test('60 callers at once at 40/s take places 1.04 s / 40 apart and start no earlier, never more than 40 in 1.04 s', async () => {
	// What the gate promises is on Redis: the places the number's clock hands out, and the start
	// each send took. Start times alone cannot show it: a process that stalls (a loaded machine, a
	// GC pause) wakes several sleepers in one tick, later than their places, and those count when
	// they go, side by side; the rate span keeps them to the rate.
	const sender = await newSender();
	const { from } = sender;
	const { redis, keys } = runner.context;
	await setSpacingRate(runner.context, from, 40);
	const monitor = await monitorCommands(redis as Redis);
	/** The number's clock as the gate's script moves it (MONITOR shows a script's commands): each first call sets `next` one gap past the position it handed out. */
	const clock: number[] = [];
	/** Each send's place (µs, Redis's clock), as its call after the wait hands it back (ARGV[9]). */
	const places = new Map<string, number>();
	let seen = () => {};
	monitor.on('monitor', (_time: string, args: string[]) => {
		const command = args[0].toLowerCase();
		if (command === 'hset' && args[1] === keys.spacing(from) && args[2] === 'next') clock.push(Number(args[3]));
		if (command === 'evalsha') {
			const argv = args.slice(3 + Number(args[2]));
			if (argv[1].startsWith('job-') && argv[8] && !places.has(argv[1])) places.set(argv[1], Number(argv[8]));
		}
		if (args[1] === `marker-${from}`) seen();
	});
	const started = Date.now();
	let times: number[];
	try {
		// Start times as the gate took them, on Redis's clock (what the rate span counts).
		times = (await Promise.all(
			Array.from({ length: 60 }, (_, i) => waitForStart(runner.context, sender, `job-${i}`, never)),
		)) as number[];
		// MONITOR's feed lags the replies: a marker command seen there means the starts' commands were too.
		await new Promise<void>((resolve) => {
			seen = resolve;
			void redis.exists(`marker-${from}`);
		});
	} finally {
		monitor.disconnect();
	}
	const span = Date.now() - started;
	const gap = 1000 / gateRate(40);
	const gapUs = gap * 1000;
	expect(span).toBeGreaterThanOrEqual(59 * gap - 50);
	expect(mostIn(times, RATE_SPAN_MS)).toBeLessThanOrEqual(40);
	// Every caller took one position on the clock, at least a gap after the one before: a place
	// ahead of now exactly one gap after it, now itself when the clock had fallen behind (the first
	// caller, or one whose first call a loaded machine sent late).
	expect(clock).toHaveLength(60);
	const positions = clock.map((next) => next - gapUs);
	for (let i = 1; i < positions.length; i++) expect(positions[i] - positions[i - 1]).toBeGreaterThanOrEqual(gapUs - 2);
	expect(places.size).toBeGreaterThan(0);
	for (const place of places.values()) {
		const at = positions.findIndex((position) => Math.abs(position - place) <= 1);
		expect(at).toBeGreaterThan(0);
		expect(place - positions[at - 1]).toBeCloseTo(gapUs, -1);
	}
	// No send starts before its place (one on time counts at it, a late one when it goes).
	times.forEach((time, i) => {
		const place = places.get(`job-${i}`);
		if (place !== undefined) expect(time * 1000).toBeGreaterThanOrEqual(place - 1);
	});
});

test('RUNNER_RATE_ROOM sets the room: at 18ms, places 1.018 s / rate apart and bunched starts held to the rate in 1.018 s', async () => {
	const room = 0.018;
	const context = { ...runner.context, config: { ...runner.context.config, RUNNER_RATE_ROOM: 18 } };
	const sender = await newSender();
	const { from } = sender;
	const { redis, keys } = context;
	await setSpacingRate(context, from, 40);
	const monitor = await monitorCommands(redis as Redis);
	/** The number's clock as the gate's script moves it: one gap past each position it hands out. */
	const clock: number[] = [];
	let seen = () => {};
	monitor.on('monitor', (_time: string, args: string[]) => {
		if (args[0].toLowerCase() === 'hset' && args[1] === keys.spacing(from) && args[2] === 'next')
			clock.push(Number(args[3]));
		if (args[1] === `marker-${from}`) seen();
	});
	try {
		await Promise.all(Array.from({ length: 12 }, (_, i) => waitForStart(context, sender, `room-${i}`, never)));
		await new Promise<void>((resolve) => {
			seen = resolve;
			void redis.exists(`marker-${from}`);
		});
	} finally {
		monitor.disconnect();
	}
	// 25.5 ms at 18 ms of room against 26.05 ms at the default 40: callers asking at once take
	// positions one gap apart (one a loaded machine sent late may find the clock behind now: wider).
	const gapUs = 1_000_000 / gateRate(40, room);
	expect(1_000_000 / gateRate(40) - gapUs).toBeGreaterThan(500);
	expect(clock).toHaveLength(12);
	const gaps = clock.slice(1).map((next, i) => next - clock[i]);
	for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(gapUs - 2);
	const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)];
	expect(median).toBeCloseTo(gapUs, -1);

	// The rate span is the room's too: with the clock lost, 20 pass at once at 20/s, the 21st when the first leaves 1.018 s.
	const bunched = await newSender();
	await setSpacingRate(context, bunched.from, 20);
	const times: number[] = [];
	for (let i = 0; i < 21; i++) {
		await redis.hdel(keys.spacing(bunched.from), 'next');
		times.push((await waitForStart(context, bunched, `room-late-${i}`, never)) as number);
	}
	expect(rateSpanMs(room)).toBe(1018);
	expect(mostIn(times, rateSpanMs(room))).toBeLessThanOrEqual(20);
	expect(times[20] - times[0]).toBeGreaterThanOrEqual(rateSpanMs(room) - 1);
});

test('starts that bunch (the spacing clock lost) are held to the rate in any 1.04 s', async () => {
	const sender = await newSender();
	const { from } = sender;
	await setSpacingRate(runner.context, from, 20);
	const times: number[] = [];
	for (let i = 0; i < 30; i++) {
		await runner.context.redis.hdel(runner.context.keys.spacing(from), 'next');
		times.push((await waitForStart(runner.context, sender, `late-${i}`, never)) as number);
	}
	expect(RATE_SPAN_MS).toBe(1040);
	expect(mostIn(times, RATE_SPAN_MS)).toBeLessThanOrEqual(20);
	// The first 20 pass at once; the next waits for the first to leave the rate span (both on Redis's clock).
	expect(times[19] - times[0]).toBeLessThan(500);
	expect(times[20] - times[0]).toBeGreaterThanOrEqual(RATE_SPAN_MS - 1);
	// The start log is a rate span's worth of starts: it expires on its own once the number is idle.
	const ttl = await runner.context.redis.pttl(runner.context.keys.startLog(from));
	expect(ttl).toBeGreaterThan(0);
	expect(ttl).toBeLessThanOrEqual(2000);
});

test('the rate span counts the starts inside it whatever older ones the log still holds, and is not trimmed on every start', async () => {
	// The log is read by rank (the rate-th latest start) and trimmed only when it is renewed, twice
	// a second: starts older than the span stay in it meanwhile and must hold no one, and those
	// inside it must hold the next start until the oldest of them leaves.
	const sender = await newSender();
	const { from } = sender;
	const { redis, keys } = runner.context;
	await setSpacingRate(runner.context, from, 20);
	const [seconds, micros] = await redis.time();
	const nowUs = Number(seconds) * 1_000_000 + Number(micros);
	// 100 starts from 1.1 to 1.5 s ago: out of the span, but more than the rate.
	await redis.zadd(
		keys.startLog(from),
		...Array.from({ length: 100 }, (_, i) => [String(nowUs - 1_100_000 - i * 4_000), `old-${i}`]).flat(),
	);
	const monitor = await monitorCommands(redis as Redis);
	const onLog: string[] = [];
	let seen = () => {};
	monitor.on('monitor', (_time: string, args: string[]) => {
		if (args[1] === keys.startLog(from)) onLog.push(args[0].toUpperCase());
		if (args[1] === `marker-${from}`) seen();
	});
	const times: number[] = [];
	try {
		for (let i = 0; i < 21; i++) {
			await redis.hdel(keys.spacing(from), 'next');
			times.push((await waitForStart(runner.context, sender, `bunched-${i}`, never)) as number);
		}
		// MONITOR's feed lags the replies: a marker command seen there means the starts' commands were too.
		await new Promise<void>((resolve) => {
			seen = resolve;
			void redis.exists(`marker-${from}`);
		});
	} finally {
		monitor.disconnect();
	}
	expect(mostIn(times, RATE_SPAN_MS)).toBeLessThanOrEqual(20);
	// The 20 pass at once however many old starts the log holds; the 21st waits for the first to leave.
	expect(times[19] - times[0]).toBeLessThan(500);
	expect(times[20] - times[0]).toBeGreaterThanOrEqual(RATE_SPAN_MS - 1);
	const count = (name: string) => onLog.filter((command) => command === name).length;
	// 21 starts in the log: a start whose answer came late is given back (ZREM) and taken again (ZADD).
	expect(count('ZADD') - count('ZREM')).toBe(21);
	// Trimmed at the renewals (the first start, then at most every 0.5 s while they last), not 21 times.
	expect(count('ZREMRANGEBYSCORE')).toBeLessThanOrEqual(1 + Math.floor((times[20] - times[0]) / 500));
	expect(count('ZCARD') + count('ZCOUNT')).toBe(0);
});

test('starts that bunch at 100/s are held to secondCap (96) in any second, and the rate in any 1.04 s', async () => {
	// The 1.04 s span alone let all 100 bunch into one second; a stall on the way to the service
	// then put 113 arrivals into a second (the container test). The count cap keeps room for it.
	const sender = await newSender();
	const { from } = sender;
	await setSpacingRate(runner.context, from, 100);
	expect(secondCap(100)).toBe(96);
	const times: number[] = [];
	for (let i = 0; i < 110; i++) {
		await runner.context.redis.hdel(runner.context.keys.spacing(from), 'next');
		times.push((await waitForStart(runner.context, sender, `bunch-${i}`, never)) as number);
	}
	expect(mostIn(times, 1000)).toBeLessThanOrEqual(96);
	expect(mostIn(times, RATE_SPAN_MS)).toBeLessThanOrEqual(100);
	// The first 96 pass at once; the 97th waits for the first to leave the second (Redis's clock, µs rounded to ms).
	expect(times[95] - times[0]).toBeLessThan(500);
	expect(times[96] - times[0]).toBeGreaterThanOrEqual(999);
});

test('a start whose answer a stalled process reads late is given back and taken again when the process runs', async () => {
	const sender = await newSender();
	const { from } = sender;
	const { redis, keys } = runner.context;
	await setSpacingRate(runner.context, from, 100);
	const [seconds, micros] = await redis.time();
	const before = Number(seconds) * 1000 + Number(micros) / 1000;
	const started = waitForStart(runner.context, sender, 'stalled', never);
	// The event loop stalls while the answer is on its way (what a GC pause or a starved container does).
	const stallUntil = performance.now() + 3 * FRESH_START_MS;
	while (performance.now() < stallUntil);
	const start = (await started) as number;
	// Taken again after the stall: the rate span counts the start when the send really goes out.
	expect(start - before).toBeGreaterThanOrEqual(2 * FRESH_START_MS);
	expect(Number(await redis.zscore(keys.startLog(from), 'stalled')) / 1000).toBeCloseTo(start, 0);
	expect(await redis.zcard(keys.startLog(from))).toBe(1);
});

test('a start taken again at the send whose own answer a stalled process reads late is taken once more when the process runs', async () => {
	const sender = await newSender();
	const { from } = sender;
	const { redis, keys } = runner.context;
	await setSpacingRate(runner.context, from, 100);
	await waitForStart(runner.context, sender, 'stale', never);
	const [seconds, micros] = await redis.time();
	const before = Number(seconds) * 1000 + Number(micros) / 1000;
	const taken = takeStartAgain(runner.context, sender, 'stale');
	// The stall comes again while the retake's answer is on its way.
	const stallUntil = performance.now() + 3 * FRESH_START_MS;
	while (performance.now() < stallUntil);
	await taken;
	// Counted when the process runs again, not when Redis answered during the stall.
	const again = Number(await redis.zscore(keys.startLog(from), 'stale')) / 1000;
	expect(again - before).toBeGreaterThanOrEqual(2 * FRESH_START_MS);
	expect(await redis.zcard(keys.startLog(from))).toBe(1);
});

test('a process whose every answer comes late keeps the start after three retakes and tells the operator once', async () => {
	const sender = await newSender();
	const { redis, keys } = runner.context;
	await setSpacingRate(runner.context, sender.from, 100);
	const lines: string[] = [];
	const log = createLogger('warn', 'convo-runner', {
		destination: new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }),
	});
	// A room of 2 µs: half of it is less than any round trip to Redis, so every answer is late.
	const context = { ...runner.context, log, config: { ...runner.context.config, RUNNER_RATE_ROOM: 0.002 } };
	const monitor = await monitorCommands(redis as Redis);
	let evals = 0;
	let seen = () => {};
	monitor.on('monitor', (_time: string, args: string[]) => {
		if (args[0].toLowerCase() === 'evalsha' && args.includes(sender.campaign)) evals++;
		if (args[1] === `marker-${sender.from}`) seen();
	});
	try {
		await waitForStart(context, sender, 'slow-1', never);
		await takeStartAgain(context, sender, 'slow-1');
		await new Promise<void>((resolve) => {
			seen = resolve;
			void redis.exists(`marker-${sender.from}`);
		});
	} finally {
		monitor.disconnect();
	}
	// The start and its retake at the send, each kept after its first answer and three retakes:
	// four calls each, and no spin; the second keep is within the minute, so one warning.
	expect(evals).toBe(8);
	expect(await redis.zcard(keys.startLog(sender.from))).toBe(1);
	expect(lines).toHaveLength(1);
	expect(JSON.parse(lines[0])).toMatchObject({ campaign: sender.campaign, roomMs: 0.002 });
	expect(lines[0]).toContain('raise RUNNER_RATE_ROOM');
	expect(lines[0]).not.toContain(sender.from);
});

test('a send a little late to its place counts at its place (a span later nothing is turned away for it); much later, when it goes', async () => {
	// The largest room, so that the lateness a place allows (a quarter of it) is far more than a
	// loaded machine's way from this test's reading of Redis's clock to the script's.
	const context = { ...runner.context, config: { ...runner.context.config, RUNNER_RATE_ROOM: 200 } };
	expect(placeLateMs(0.2)).toBe(50);
	const { redis, keys } = context;
	const from = runner.business.phoneNumbers[0];
	const rows = Array.from({ length: 3 }, (_, i) => ({
		phone: `4915277${String(i).padStart(5, '0')}`,
		1: `R${i}`,
		2: 'x',
	}));
	const created = await createCampaign(
		context,
		{ templateId: positionalTemplate(runner.business).id, from, source: 'request.json' },
		inlineRecords(rows),
	);
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	await setSpacingRate(context, from, 10);
	const send = { from, campaign: created.id };
	const [seconds, micros] = await redis.time();
	const nowUs = Number(seconds) * 1_000_000 + Number(micros);
	// Its place came 5 ms ago: a timer's lateness. It is recorded at the place, not at the call.
	const place = String(nowUs - 5_000);
	const onTime = await startNextInJob(
		context,
		send,
		{ first: 0, end: 3 },
		{ token: 'place-t1', id: 'on-time', place: { localMs: Date.now(), redisUs: place } },
		never,
	);
	expect(onTime).toMatchObject({ recipients: [{ index: 0 }] });
	expect(await redis.zscore(keys.startLog(from), 'on-time')).toBe(place);
	// Its place came 200 ms ago: it counts when it goes.
	const late = await startNextInJob(
		context,
		send,
		{ first: 1, end: 3 },
		{ token: 'place-t2', id: 'late', place: { localMs: Date.now(), redisUs: String(nowUs - 200_000) } },
		never,
	);
	expect(late).toMatchObject({ recipients: [{ index: 1 }] });
	expect(Number(await redis.zscore(keys.startLog(from), 'late'))).toBeGreaterThanOrEqual(nowUs);
});

test('at low rates too the clock spaces places at 0.95 of the rate or more, a start at its place finds room, never more than the rate in 1.04 s', async () => {
	// 4/s and 10/s: a room of whole starts (the rate less 4% rounded up) held them to 3/s and 9/s.
	// What the gate lets through is decided on Redis: how far apart the clock puts places, and whether
	// the rate span turns a start at its place away. The sustained rate in wall time is bench 8's: on
	// a loaded machine, sends woken late lose time the gate never took (CI measured 0.947 here).
	const { redis, keys } = runner.context;
	const redisUs = async () => {
		const [seconds, micros] = await redis.time();
		return Number(seconds) * 1_000_000 + Number(micros);
	};
	await Promise.all(
		[4, 10].map(async (rate) => {
			// Places: two spans' worth of callers at once; each first call moves the clock one gap on.
			const sender = await newSender();
			await setSpacingRate(runner.context, sender.from, rate);
			const callers = 2 * rate + 1;
			const times = (await Promise.all(
				Array.from({ length: callers }, (_, i) => waitForStart(runner.context, sender, `low-${i}`, never)),
			)) as number[];
			// The first caller took now as its place and started at it; the clock stands a gap past the last place.
			const firstUs = Math.min(...times) * 1000;
			const next = Number(await redis.hget(keys.spacing(sender.from), 'next'));
			const placesPerSecond = callers / ((next - firstUs) / 1_000_000);
			expect(placesPerSecond).toBeGreaterThanOrEqual(0.95 * rate);
			expect(placesPerSecond).toBeLessThanOrEqual(rate);
			expect(mostIn(times, RATE_SPAN_MS)).toBeLessThanOrEqual(rate);

			// Room: rate - 1 starts a gap apart before now, as a full chain of places leaves them. A start
			// now finds room at once, not after the oldest leaves the rate span.
			const chain = await newSender();
			await setSpacingRate(runner.context, chain.from, rate);
			const gapUs = 1_000_000 / gateRate(rate);
			const nowUs = await redisUs();
			const before = Array.from({ length: rate - 1 }, (_, i) => nowUs - (i + 1) * gapUs);
			await redis.zadd(keys.startLog(chain.from), ...before.flatMap((at, i) => [Math.round(at), `before-${i}`]));
			const start = (await waitForStart(runner.context, chain, 'at-place', never)) as number;
			const oldestLeavesUs = before[before.length - 1] + RATE_SPAN_MS * 1000;
			expect(start * 1000).toBeLessThan(oldestLeavesUs);
		}),
	);
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
	// No clock is kept for it: the rate, once set, spaces from its first start on.
	expect(await runner.context.redis.hget(runner.context.keys.spacing(sender.from), 'next')).toBeNull();
});

test('a send of a campaign not running takes no start; one paused while it waits for its start takes none either', async () => {
	const { redis, keys } = runner.context;
	const sender = await newSender();
	await setSpacingRate(runner.context, sender.from, 1);
	await redis.hset(keys.campaign(sender.from, sender.campaign), 'state', 'paused');
	expect(await waitForStart(runner.context, sender, 'dead', never)).toBe('not running');
	expect(await redis.hget(keys.spacing(sender.from), 'next')).toBeNull();
	expect(await redis.zcard(keys.startLog(sender.from))).toBe(0);

	// Running: the first starts now, the second waits about a second for its time; paused meanwhile, it takes no start.
	await redis.hset(keys.campaign(sender.from, sender.campaign), 'state', 'running');
	await waitForStart(runner.context, sender, 'first', never);
	const waiting = waitForStart(runner.context, sender, 'second', never);
	await new Promise((resolve) => setTimeout(resolve, 300));
	await redis.hset(keys.campaign(sender.from, sender.campaign), 'state', 'cancelled');
	expect(await waiting).toBe('not running');
	expect(await redis.zrange(keys.startLog(sender.from), 0, -1)).toEqual(['first']);
});

test("the places a stopped campaign's waiting sends held are given back, so another campaign on the number starts at once; a 429's hold still holds", async () => {
	const { redis, keys } = runner.context;
	const a = await newSender();
	const b = { from: a.from, campaign: `cspacing${numbers++}` };
	await redis.hset(keys.campaign(a.from, b.campaign), 'state', 'running');
	await setSpacingRate(runner.context, a.from, 5);
	// Ten of A's sends take the number's next ten places (2 s at 5/s) and wait for them; A stops.
	const waiting = Array.from({ length: 10 }, (_, i) => waitForStart(runner.context, a, `a-${i}`, never));
	await new Promise((resolve) => setTimeout(resolve, 20));
	await redis.hset(keys.campaign(a.from, a.campaign), 'state', 'paused');
	expect(await restartSpacing(runner.context, a.from)).toBeGreaterThan(1500);
	const asked = Date.now();
	expect(typeof (await waitForStart(runner.context, b, 'b-0', never))).toBe('number');
	// Without the restart B's send waited behind A's nine remaining places, about 1.9 s.
	expect(Date.now() - asked).toBeLessThan(300);
	const answers = await Promise.all(waiting);
	expect(answers.filter((answer) => answer === 'not running')).toHaveLength(9);

	await holdStarts(runner.context, a.from, 800);
	const held = Date.now();
	await restartSpacing(runner.context, a.from);
	await waitForStart(runner.context, b, 'b-1', never);
	expect(Date.now() - held).toBeGreaterThanOrEqual(750);
});

test('a claimed send whose start went stale before it went out takes it again: at once while the rate span has room, once the oldest leaves it when full', async () => {
	const { redis, keys } = runner.context;
	const sender = await newSender();
	await setSpacingRate(runner.context, sender.from, 2);
	const first = (await waitForStart(runner.context, sender, 'one', never)) as number;
	const second = (await waitForStart(runner.context, sender, 'two', never)) as number;
	// Taken again, 'one' leaves the log and comes back now: the span holds 'two' and it, the rate.
	await takeStartAgain(runner.context, sender, 'one');
	const again = Number(await redis.zscore(keys.startLog(sender.from), 'one')) / 1000;
	expect(again).toBeGreaterThan(second);
	expect(mostIn([again, second], RATE_SPAN_MS)).toBe(2);
	expect(first).toBeLessThan(second);
	// The span is full: another send's start taken again waits until 'two' leaves it.
	await takeStartAgain(runner.context, sender, 'three');
	const third = Number(await redis.zscore(keys.startLog(sender.from), 'three')) / 1000;
	expect(third).toBeGreaterThanOrEqual(second + RATE_SPAN_MS);
});
