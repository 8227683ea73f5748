/**
 * Sends from one business number kept under its rate in every sliding second, across every
 * process. BullMQ's global limiter (limiterFor, jobs.ts) counts starts in fixed 50 ms slices, so a sliding
 * second can hold one slice more than the rate: 210 in some second at 200/s, as the benchmark
 * measured. So each send also passes two steps here, both on Redis's clock (TIME), so processes
 * on other machines agree:
 *
 * 1. Spacing: it takes the next start time from a per-number clock, 1 / windowRate(rate) after
 *    the previous one, and waits for it. Starts are even, not bursts at each slice's start, and
 *    no faster than the window lets through: spaced faster, the window bound every second and
 *    its waiters, all told to wake when the same oldest start left, woke together and all but one
 *    called again (13 calls per send at 200/s, 3 with this spacing).
 * 2. The window: a start is allowed only while fewer than `rate` sends started in the last
 *    WINDOW_ROOM-longer-than-a-second and fewer than secondCap(rate) in the last second (a sorted
 *    set of start times). A send that woke late (a busy event loop, a GC pause) and would bunch
 *    with the next ones waits here until there is room.
 *
 * The limiter stays as the coarse gate that keeps workers from taking more jobs than the rate.
 *
 * Both steps first look at the send's campaign: a job of a campaign that is not running (paused,
 * cancelled, failed) takes no start and no place in the window, so it costs the other campaigns
 * on the number nothing here. The send processor then takes the campaign's other queued jobs out
 * of the queue (feeder.ts, dropQueuedSends), so they do not wait their turn at the limiter either.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { RunnerContext } from '../context';
import { luaScript } from '../redis';

/**
 * How much longer than a second the window is: room in time for the way to the service. Between
 * a start taken here and its arrival at the service, sends bunch by up to about 35 ms (event
 * loops, GC pauses on both sides; 3 to 7 sends at 100-200/s, measured by benchmark 1), so the
 * starts of any second of arrivals lie within 1.04 s, and `rate` starts per 1.04 s keep every
 * second at the service at or under the rate. The room is time, not a count of starts: a room of
 * whole starts (the rate less 4% rounded up) held 10/s to 9/s and 4/s to 3/s, 0.9 and 0.75 of the
 * rate (deadjobs.test.ts, spacing.test.ts), where the same 40 ms is a fraction of one start.
 */
const WINDOW_ROOM = 0.04;

/** The window's length, ms: a start needs fewer than `rate` starts in the last WINDOW_MS. */
export const WINDOW_MS = 1000 * (1 + WINDOW_ROOM);

/**
 * Starts allowed in any one second at `rate`: the rate less its room in whole starts, rounded
 * down (96 at 100/s, 10 at 10/s). The longer window alone lets a whole `rate` of starts bunch into
 * one second after a stall, so a later stall on the way to the service pushed a second of arrivals
 * to 113 at 100/s (the container test, the runner container killed mid-campaign); this keeps the
 * room in starts where the rate is high enough to have any, and costs low rates nothing.
 */
export const secondCap = (rate: number) => rate - Math.floor(rate * WINDOW_ROOM);

/** Starts per second the gate lets through at `rate`, sustained: 0.96 of it or more (the scripts compute the same). */
export const windowRate = (rate: number) => Math.min(rate / (1 + WINDOW_ROOM), secondCap(rate));

/** Answered by both steps for a send whose campaign is not running: it takes no start. */
const NOT_RUNNING = -1;

/**
 * The window step, shared by both scripts. KEYS[1] spacing hash, KEYS[2] start log; `rate` the
 * number's rate (read once by the calling script), ARGV[1] the window's room, ARGV[2] the member.
 * Records a start and returns { 0, its time in microseconds } when the window and the last second
 * have room, else { microseconds until a start leaves whichever is full }.
 */
const LUA_TAKE = `
local function windowUs()
  return 1000000 * (1 + tonumber(ARGV[1]))
end
local function secondCap(rate)
  return rate - math.floor(rate * tonumber(ARGV[1]))
end
local function gapUs(rate)
  return math.max(windowUs() / rate, 1000000 / secondCap(rate))
end
local function take(rate, now)
  if not rate or rate <= 0 then return { 0, string.format('%.0f', now) } end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now - windowUs()))
  if redis.call('ZCARD', KEYS[2]) >= rate then
    local oldest = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
    return { math.max(1000, math.floor(oldest + windowUs() - now)) }
  end
  local secondStart = '(' .. string.format('%.0f', now - 1000000)
  local inSecond = redis.call('ZCOUNT', KEYS[2], secondStart, '+inf')
  local cap = secondCap(rate)
  if inSecond >= cap then
    local leaving = redis.call('ZRANGEBYSCORE', KEYS[2], secondStart, '+inf', 'WITHSCORES', 'LIMIT', inSecond - cap, 1)
    return { math.max(1000, math.floor(tonumber(leaving[2]) + 1000000 - now)) }
  end
  redis.call('ZADD', KEYS[2], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[2], 2000)
  return { 0, string.format('%.0f', now) }
end
local function clock()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end
`;

/**
 * KEYS: spacing hash, start log, campaign hash. ARGV: window room, member. Takes this
 * send's start time from the number's clock; a start due now also passes the window in the same
 * call (one round trip for a send that need not wait). Returns { 0, start time in microseconds }
 * when it started, { microseconds to wait, then TAKE_START }, or { NOT_RUNNING }.
 */
const NEXT_START = `${LUA_TAKE}
if redis.call('HGET', KEYS[3], 'state') ~= 'running' then return { ${NOT_RUNNING} } end
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
local now = clock()
if not rate or rate <= 0 then return { 0, string.format('%.0f', now) } end
local nextAt = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
local at = math.max(now, nextAt)
redis.call('HSET', KEYS[1], 'next', string.format('%.0f', at + gapUs(rate)))
if at > now then return { math.floor(at - now) } end
return take(rate, now)
`;

/**
 * KEYS: spacing hash, start log, campaign hash. ARGV: window room, member, and `again` when the
 * member's earlier start went stale (its place in the window is given back first). The window
 * step after a wait: { 0, start time in microseconds }, { microseconds to wait and try again }, or
 * { NOT_RUNNING } when the campaign stopped meanwhile.
 */
const TAKE_START = `${LUA_TAKE}
if ARGV[3] == 'again' then redis.call('ZREM', KEYS[2], ARGV[2]) end
if redis.call('HGET', KEYS[3], 'state') ~= 'running' then return { ${NOT_RUNNING} } end
return take(tonumber(redis.call('HGET', KEYS[1], 'rate') or '0'), clock())
`;

/**
 * KEYS: spacing hash. ARGV: milliseconds. Nothing from the number starts before then (a 429's
 * Retry-After); `held` keeps the time, so a restart (RESTART) does not start sooner.
 */
const HOLD = `
local time = redis.call('TIME')
local holdUntil = tonumber(time[1]) * 1000000 + tonumber(time[2]) + tonumber(ARGV[1]) * 1000
if holdUntil > tonumber(redis.call('HGET', KEYS[1], 'next') or '0') then redis.call('HSET', KEYS[1], 'next', string.format("%.0f", holdUntil)) end
if holdUntil > tonumber(redis.call('HGET', KEYS[1], 'held') or '0') then redis.call('HSET', KEYS[1], 'held', string.format("%.0f", holdUntil)) end
return 1
`;

/**
 * KEYS: spacing hash. Brings the number's clock back to now (or to the end of a 429's hold): the
 * places it had handed out ahead belong to sends that will take none. Returns microseconds given back.
 */
const RESTART = `
local time = redis.call('TIME')
local from = math.max(tonumber(time[1]) * 1000000 + tonumber(time[2]), tonumber(redis.call('HGET', KEYS[1], 'held') or '0'))
local nextAt = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
if nextAt <= from then return 0 end
redis.call('HSET', KEYS[1], 'next', string.format('%.0f', from))
return math.floor(nextAt - from)
`;

/** The number's rate, as the feeder applies it (the strictest of its running campaigns). */
export async function setSpacingRate(context: RunnerContext, from: string, ratePerSecond: number): Promise<void> {
	await context.redis.hset(context.keys.spacing(from), 'rate', ratePerSecond);
}

/** Why a send took no start: its process is stopping, or its campaign is not running (paused, ended). */
type NoStart = 'stopped' | 'not running';

/**
 * How long, on this process's clock, the answer granting a start may take to arrive. A process
 * that stalls (a GC pause, a CPU-starved container) gets its answers late and would send their
 * starts together with the ones that follow on time, a burst the window never saw: at a runner
 * container's restart, 113 sends reached the service in one second at 100/s. A start that comes
 * back later than this is given back and taken again, so the window counts when it goes out.
 * Well above a round trip to Redis (under 1 ms here), well under the window's 40 ms of room.
 */
export const FRESH_START_MS = 20;

/**
 * Waits until this send of `campaign` from `from` may start (`id`: unique per attempt) and returns
 * the start's time on Redis's clock (ms), or why it took none.
 */
export async function waitForStart(context: RunnerContext, send: { from: string; campaign: string }, id: string, stop: AbortSignal): Promise<number | NoStart> {
	const { redis, keys } = context;
	const next = luaScript(redis, 'convoNextStart', NEXT_START, 3);
	const take = luaScript(redis, 'convoTakeStart', TAKE_START, 3);
	const scriptKeys = [keys.spacing(send.from), keys.startLog(send.from), keys.campaign(send.from, send.campaign)];
	// The first call may take the start itself: a process already stopping takes none.
	if (stop.aborted) return 'stopped';
	let asked = performance.now();
	let [waitUs, startedUs] = (await next(scriptKeys, [WINDOW_ROOM, id])) as [number, string?];
	// A process slow on every call is slow, not stalled: after a few stale starts it keeps the next.
	let staleLeft = 3;
	for (;;) {
		if (waitUs === NOT_RUNNING) return 'not running';
		const stale = waitUs === 0 && performance.now() - asked > FRESH_START_MS && staleLeft-- > 0;
		if (waitUs === 0 && !stale) return Number(startedUs) / 1000;
		if (!stale) await sleep(waitUs / 1000);
		if (stop.aborted) {
			if (stale) await redis.zrem(keys.startLog(send.from), id);
			return 'stopped';
		}
		asked = performance.now();
		[waitUs, startedUs] = (await take(scriptKeys, stale ? [WINDOW_ROOM, id, 'again'] : [WINDOW_ROOM, id])) as [number, string?];
	}
}

export async function holdStarts(context: RunnerContext, from: string, waitMs: number): Promise<void> {
	const run = luaScript(context.redis, 'convoHoldStarts', HOLD, 1);
	await run([context.keys.spacing(from)], [waitMs]);
}

/**
 * A campaign on `from` just stopped: its sends waiting at the gate hold places on the number's
 * clock they will not use (they find the campaign stopped when their time comes). BullMQ's
 * limiter hands jobs out at the rate and the gate lets 0.96 of it through, so the waiters grow by
 * 4% of the rate each second up to the worker slots (RUNNER_CONCURRENCY per process): by that
 * reckoning, at 20/s after 25 s, about a second of the number's starts (measured: up to 0.53 s at
 * 4/s on a loaded machine, where workers lag and fewer wait). Handing the clock back lets the
 * number's other campaigns start now instead. A send of another campaign already waiting keeps its
 * place, so for a moment starts may come closer than the spacing; the window still holds the
 * number to its rate. Returns the milliseconds given back.
 */
export async function restartSpacing(context: RunnerContext, from: string): Promise<number> {
	const run = luaScript(context.redis, 'convoRestartSpacing', RESTART, 1);
	return Number(await run([context.keys.spacing(from)], [])) / 1000;
}
