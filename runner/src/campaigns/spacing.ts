/**
 * Sends from one business number kept under its rate in every sliding second, across every
 * process. BullMQ's global limiter (queues.ts) counts starts in fixed 50 ms slices, so a sliding
 * second can hold one slice more than the rate: 210 in some second at 200/s, as the benchmark
 * measured. So each send also passes two steps here, both on Redis's clock (TIME), so processes
 * on other machines agree:
 *
 * 1. Spacing: it takes the next start time from a per-number clock, 1 / (HEADROOM × rate) after
 *    the previous one, and waits for it. Starts are even, not bursts at each slice's start.
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
 * Starts allowed in any second: the rate less 4% (at least 1 from 26/s), room for the way to the
 * service. Measured on the benchmark: between a start taken here and its arrival at the service,
 * sends bunch by 3 to 7 at 100-200/s (event loops, GC pauses on both sides); at 200/s, with 1%
 * room 203 arrived in some second, with 3% 200 in one run and 201 in another.
 */
export const windowCap = (rate: number) => Math.max(1, rate - Math.ceil(rate * 0.04));

/** Answered by both steps for a send whose campaign is not running: it takes no start. */
const NOT_RUNNING = -1;

/**
 * KEYS: spacing hash, campaign hash. ARGV: headroom. Returns microseconds to wait for this send's
 * start time, or NOT_RUNNING.
 */
const NEXT_START = `
if redis.call('HGET', KEYS[2], 'state') ~= 'running' then return ${NOT_RUNNING} end
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
if not rate or rate <= 0 then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local nextAt = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
local at = math.max(now, nextAt)
redis.call('HSET', KEYS[1], 'next', string.format('%.0f', at + 1000000 / (rate * tonumber(ARGV[1]))))
return math.floor(at - now)
`;

/**
 * KEYS: spacing hash, start log, campaign hash. ARGV: cap, member. Records a start and returns
 * { 0, its time in microseconds } when the last second has room, else { microseconds until its
 * oldest start leaves the window }; { NOT_RUNNING } when the campaign stopped meanwhile.
 */
const TAKE_START = `
if redis.call('HGET', KEYS[3], 'state') ~= 'running' then return { ${NOT_RUNNING} } end
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
if not rate or rate <= 0 then return { 0, string.format('%.0f', now) } end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 1000000)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[1]) then
  local oldest = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
  return { math.max(1000, math.floor(oldest + 1000000 - now)) }
end
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('PEXPIRE', KEYS[2], 2000)
return { 0, string.format('%.0f', now) }
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
	const next = luaScript(redis, 'convoNextStart', NEXT_START, 2);
	const take = luaScript(redis, 'convoTakeStart', TAKE_START, 3);
	const rate = Number(await redis.hget(keys.spacing(send.from), 'rate'));
	const delayUs = Number(await next([keys.spacing(send.from), keys.campaign(send.campaign)], [HEADROOM]));
	if (delayUs === NOT_RUNNING) return 'not running';
	if (delayUs > 0) await sleep(delayUs / 1000);
	for (;;) {
		if (stop.aborted) return 'stopped';
		const [waitUs, startedUs] = (await take([keys.spacing(send.from), keys.startLog(send.from), keys.campaign(send.campaign)], [windowCap(rate), id])) as [number, string?];
		if (waitUs === NOT_RUNNING) return 'not running';
		if (waitUs === 0) return Number(startedUs) / 1000;
		await sleep(waitUs / 1000);
	}
}

export async function holdStarts(context: RunnerContext, from: string, waitMs: number): Promise<void> {
	const run = luaScript(context.redis, 'convoHoldStarts', HOLD, 1);
	await run([context.keys.spacing(from)], [waitMs]);
}
