/**
 * Sends from one business number kept under its rate in every sliding second, across every
 * process. BullMQ's global limiter (queues.ts) counts starts in fixed 50 ms slices, so a sliding
 * second can hold one slice more than the rate: 210 in some second at 200/s, as the benchmark
 * measured. So each send also passes two steps here, both on Redis's clock (TIME), so processes
 * on other machines agree:
 *
 * 1. Spacing: it takes the next start time from a per-number clock, 1 / min(HEADROOM × rate,
 *    windowCap(rate)) after the previous one, and waits for it. Starts are even, not bursts at
 *    each slice's start, and no faster than the window lets through: spaced faster, the window
 *    bound every second and its waiters, all told to wake when the same oldest start left, woke
 *    together and all but one called again (13 calls per send at 200/s, 3 with this spacing).
 * 2. The window: a start is allowed only while fewer than `windowCap(rate)` sends started in the
 *    last second (a sorted set of start times). A send that woke late (a busy event loop, a GC
 *    pause) and would bunch with the next ones waits here until the second has room.
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

export const HEADROOM = 0.98;

/**
 * Of the rate, the share a second keeps free (rounded up; at least 1 start remains from 26/s):
 * room for the way to the service. Measured on the benchmark: between a start taken here and its
 * arrival at the service, sends bunch by 3 to 7 at 100-200/s (event loops, GC pauses on both
 * sides); at 200/s, with 1% room 203 arrived in some second, with 3% 200 in one run and 201 in another.
 */
const WINDOW_ROOM = 0.04;

/** Starts allowed in any second at `rate` (the scripts below compute the same from WINDOW_ROOM). */
export const windowCap = (rate: number) => Math.max(1, rate - Math.ceil(rate * WINDOW_ROOM));

/** Answered by both steps for a send whose campaign is not running: it takes no start. */
const NOT_RUNNING = -1;

/**
 * The window step, shared by both scripts. KEYS[1] spacing hash, KEYS[2] start log; `rate` the
 * number's rate (read once by the calling script), ARGV[2] the window's room, ARGV[3] the member.
 * Records a start and returns { 0, its time in microseconds } when the last second has room, else
 * { microseconds until its oldest start leaves the window }.
 */
const LUA_TAKE = `
local function windowCap(rate)
  return math.max(1, rate - math.ceil(rate * tonumber(ARGV[2])))
end
local function take(rate, now)
  if not rate or rate <= 0 then return { 0, string.format('%.0f', now) } end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 1000000)
  local cap = windowCap(rate)
  if redis.call('ZCARD', KEYS[2]) >= cap then
    local oldest = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
    return { math.max(1000, math.floor(oldest + 1000000 - now)) }
  end
  redis.call('ZADD', KEYS[2], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[2], 2000)
  return { 0, string.format('%.0f', now) }
end
local function clock()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end
`;

/**
 * KEYS: spacing hash, start log, campaign hash. ARGV: headroom, window room, member. Takes this
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
redis.call('HSET', KEYS[1], 'next', string.format('%.0f', at + 1000000 / math.min(rate * tonumber(ARGV[1]), windowCap(rate))))
if at > now then return { math.floor(at - now) } end
return take(rate, now)
`;

/**
 * KEYS: spacing hash, start log, campaign hash. ARGV: (unused), window room, member. The window
 * step after a wait: { 0, start time in microseconds }, { microseconds to wait and try again }, or
 * { NOT_RUNNING } when the campaign stopped meanwhile.
 */
const TAKE_START = `${LUA_TAKE}
if redis.call('HGET', KEYS[3], 'state') ~= 'running' then return { ${NOT_RUNNING} } end
return take(tonumber(redis.call('HGET', KEYS[1], 'rate') or '0'), clock())
`;

/** KEYS: spacing hash. ARGV: milliseconds. Nothing from the number starts before then (a 429's Retry-After). */
const HOLD = `
local time = redis.call('TIME')
local holdUntil = tonumber(time[1]) * 1000000 + tonumber(time[2]) + tonumber(ARGV[1]) * 1000
if holdUntil > tonumber(redis.call('HGET', KEYS[1], 'next') or '0') then redis.call('HSET', KEYS[1], 'next', string.format("%.0f", holdUntil)) end
return 1
`;

/** The number's rate, as the feeder applies it (the strictest of its running campaigns). */
export async function setSpacingRate(context: RunnerContext, from: string, ratePerSecond: number): Promise<void> {
	await context.redis.hset(context.keys.spacing(from), 'rate', ratePerSecond);
}

/** Why a send took no start: its process is stopping, or its campaign is not running (paused, ended). */
type NoStart = 'stopped' | 'not running';

/**
 * Waits until this send of `campaign` from `from` may start (`id`: unique per attempt) and returns
 * the start's time on Redis's clock (ms), or why it took none.
 */
export async function waitForStart(context: RunnerContext, send: { from: string; campaign: string }, id: string, stop: AbortSignal): Promise<number | NoStart> {
	const { redis, keys } = context;
	const next = luaScript(redis, 'convoNextStart', NEXT_START, 3);
	const take = luaScript(redis, 'convoTakeStart', TAKE_START, 3);
	const scriptKeys = [keys.spacing(send.from), keys.startLog(send.from), keys.campaign(send.campaign)];
	const args = [HEADROOM, WINDOW_ROOM, id];
	// The first call may take the start itself: a process already stopping takes none.
	if (stop.aborted) return 'stopped';
	let [waitUs, startedUs] = (await next(scriptKeys, args)) as [number, string?];
	for (;;) {
		if (waitUs === NOT_RUNNING) return 'not running';
		if (waitUs === 0) return Number(startedUs) / 1000;
		await sleep(waitUs / 1000);
		if (stop.aborted) return 'stopped';
		[waitUs, startedUs] = (await take(scriptKeys, args)) as [number, string?];
	}
}

export async function holdStarts(context: RunnerContext, from: string, waitMs: number): Promise<void> {
	const run = luaScript(context.redis, 'convoHoldStarts', HOLD, 1);
	await run([context.keys.spacing(from)], [waitMs]);
}
