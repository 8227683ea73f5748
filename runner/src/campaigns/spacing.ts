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
 *    WINDOW_ROOM-longer-than-a-second (a sorted set of start times). A send that woke late (a busy
 *    event loop, a GC pause) and would bunch with the next ones waits here until there is room.
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
import { LUA_RUN_CLAIM } from '../ledger';
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
export const WINDOW_ROOM = 0.04;

/** The window's length, ms: a start needs fewer than `rate` starts in the last WINDOW_MS. */
export const WINDOW_MS = 1000 * (1 + WINDOW_ROOM);

/** Starts per second the gate lets through at `rate`, sustained: rate / 1.04, 0.96 of it (the scripts compute the same). */
export const windowRate = (rate: number) => rate / (1 + WINDOW_ROOM);

/** Answered by both steps for a send whose campaign is not running: it takes no start. */
const NOT_RUNNING = -1;

/**
 * The window step, shared by both scripts. KEYS[1] spacing hash, KEYS[2] start log; `rate` the
 * number's rate (read once by the calling script), ARGV[1] the window's room, ARGV[2] the member.
 * Records a start and returns { 0, its time in microseconds } when the window has room, else
 * { microseconds until its oldest start leaves the window }.
 */
const LUA_TAKE = `
local function windowUs()
  return 1000000 * (1 + tonumber(ARGV[1]))
end
local function take(rate, now)
  if not rate or rate <= 0 then return { 0, string.format('%.0f', now) } end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - windowUs())
  if redis.call('ZCARD', KEYS[2]) >= rate then
    local oldest = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
    return { math.max(1000, math.floor(oldest + windowUs() - now)) }
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

/** Answered for a run (below) with no recipient left to send: it takes no start. */
const RUN_DONE = -2;

/**
 * KEYS: spacing hash, start log, campaign hash, then the campaign's ledger, running set, outbox and
 * snapshot. ARGV: window room, member, "1" on a send's first call (it takes the next place on the
 * number's clock) or "0" after its wait or with its place taken by the run's previous settle
 * (ledger.ts, SETTLE_AND_PLACE: the window step only), then the run's first and last+1 index (''
 * for a start without a claim), the campaign id and the claim token.
 *
 * A send's start and its claim in one call: the run's next recipient to send is found (openInRun,
 * ledger.ts) before a start is taken, so a run with nothing left takes none, and the start taken
 * is the claim's. Returns { 0, start time in microseconds, index, attempts, snapshot row },
 * { microseconds to wait, then call again with "0" }, { NOT_RUNNING } or { RUN_DONE }.
 */
const START = `${LUA_TAKE}${LUA_RUN_CLAIM}
if redis.call('HGET', KEYS[3], 'state') ~= 'running' then return { ${NOT_RUNNING} } end
local now = clock()
local nowMs = string.format('%.0f', math.floor(now / 1000))
local idx, rec
if ARGV[4] ~= '' then
  idx, rec = openInRun(KEYS[3], KEYS[4], KEYS[5], KEYS[6], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[7], nowMs, ARGV[6])
  if not idx then return { ${RUN_DONE} } end
end
local spacing = redis.call('HMGET', KEYS[1], 'rate', 'next', 'held')
local rate = tonumber(spacing[1] or '0')
-- A place taken by a settle before a 429's hold began is given up: the send takes one after the hold.
if (ARGV[3] == '1' or (tonumber(spacing[3] or '0') or 0) > now) and rate and rate > 0 then
  local at = math.max(now, tonumber(spacing[2] or '0') or 0)
  redis.call('HSET', KEYS[1], 'next', string.format('%.0f', at + windowUs() / rate))
  if at > now then return { math.floor(at - now) } end
end
local taken = take(rate, now)
if taken[1] ~= 0 or not idx then return taken end
local attempts = rec.a + (rec.s == 'p' and 1 or 0)
return { 0, taken[2], idx, attempts, claimAt(KEYS[3], KEYS[4], KEYS[7], idx, rec, ARGV[7], nowMs) }
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

/** A run's recipient whose start was taken and claimed in the same step. */
export interface ClaimedStart {
	index: number;
	/** Claims of this recipient so far, this one included. */
	attempts: number;
	/** Its snapshot row; undefined if the snapshot lacks it. */
	row?: string;
}

interface Send {
	from: string;
	campaign: string;
}

/** The script's keys: the number's gate, then the campaign's (one hash tag, so one Cluster slot). */
const startKeys = ({ keys }: RunnerContext, { from, campaign }: Send) => [
	keys.spacing(from),
	keys.startLog(from),
	keys.campaign(from, campaign),
	keys.ledger(from, campaign),
	keys.running(from),
	keys.outbox(from),
	keys.recipients(from, campaign),
];

type StartReply = [number, string?, number?, number?, string?];

/**
 * Calls START until it answers a start or why none; `id` names the start in the window. `placeAt`:
 * the place on the clock this send took ahead (Date.now() ms): it waits for it, then needs the
 * window step only.
 */
async function takeStart(context: RunnerContext, send: Send, id: string, run: string[], stop: AbortSignal, placeAt?: number): Promise<StartReply | NoStart | 'done'> {
	const call = luaScript(context.redis, 'convoStart', START, 7);
	const scriptKeys = startKeys(context, send);
	if (placeAt !== undefined && placeAt > Date.now()) await sleep(Math.ceil(placeAt - Date.now()));
	// The first call may take the start itself: a process already stopping takes none.
	if (stop.aborted) return 'stopped';
	let reply = (await call(scriptKeys, [WINDOW_ROOM, id, placeAt === undefined ? '1' : '0', ...run])) as StartReply;
	for (;;) {
		if (reply[0] === NOT_RUNNING) return 'not running';
		if (reply[0] === RUN_DONE) return 'done';
		if (reply[0] === 0) return reply;
		// Whole milliseconds, rounded up: a timer cut short would start before its place and find the window full.
		await sleep(Math.ceil(reply[0] / 1000));
		if (stop.aborted) return 'stopped';
		reply = (await call(scriptKeys, [WINDOW_ROOM, id, '0', ...run])) as StartReply;
	}
}

/**
 * Waits until this send of `campaign` from `from` may start (`id`: unique per attempt) and returns
 * the start's time on Redis's clock (ms), or why it took none.
 */
export async function waitForStart(context: RunnerContext, send: Send, id: string, stop: AbortSignal): Promise<number | NoStart> {
	const reply = await takeStart(context, send, id, ['', '', send.campaign, ''], stop);
	if (typeof reply === 'string') return reply === 'done' ? 'not running' : reply;
	return Number(reply[1]) / 1000;
}

/**
 * Waits for the start of the next recipient to send among a run's indexes [first, end) and claims
 * it in the same step (`token`: the attempt's claim; `id`: this start's, unique; `placeAt`: its
 * place on the clock if the run's previous settle took it). 'done' when the run has nobody left
 * to send (it took no start).
 */
export async function startNextInRun(
	context: RunnerContext,
	send: Send,
	run: { first: number; end: number },
	claim: { token: string; id: string; placeAt?: number },
	stop: AbortSignal,
): Promise<ClaimedStart | NoStart | 'done'> {
	const reply = await takeStart(context, send, claim.id, [String(run.first), String(run.end), send.campaign, claim.token], stop, claim.placeAt);
	if (typeof reply === 'string') return reply;
	return { index: Number(reply[2]), attempts: Number(reply[3]), row: reply[4] ?? undefined };
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
