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
 *    with the next ones waits here until there is room; one whose answer came late is taken
 *    again (FRESH_START_MS).
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
import { luaGap, WINDOW_ROOM } from './gap';
import { capKeys, defaultCapPolicy } from './cap';

export { secondCap, WINDOW_MS, WINDOW_ROOM, windowRate } from './gap';

/** Answered by both steps for a send whose campaign is not running: it takes no start. */
const NOT_RUNNING = -1;

/**
 * The window step. KEYS[2] start log; `rate` the number's rate (read once by the calling script),
 * ARGV[2] the member. Records a start and returns { 0, its time in microseconds } when the window
 * and the last second have room, else { microseconds until a start leaves whichever is full }.
 */
const LUA_TAKE = `${luaGap('tonumber(ARGV[1])')}
local function take(rate, now)
  if not rate or rate <= 0 then return { 0, string.format('%.0f', now) } end
  -- The window is full when the rate-th latest start lies inside it, the last second when the
  -- cap-th latest does: the same test as counting the starts after each bound (a rank read in the
  -- sorted set, not a count), so starts older than the window may stay in the log meanwhile.
  local latest = redis.call('ZREVRANGE', KEYS[2], rate - 1, rate - 1, 'WITHSCORES')[2]
  if latest and tonumber(latest) > now - WINDOW_US then
    return { math.max(1000, math.floor(tonumber(latest) + WINDOW_US - now)) }
  end
  latest = redis.call('ZREVRANGE', KEYS[2], secondCap(rate) - 1, secondCap(rate) - 1, 'WITHSCORES')[2]
  if latest and tonumber(latest) > now - 1000000 then
    return { math.max(1000, math.floor(tonumber(latest) + 1000000 - now)) }
  end
  redis.call('ZADD', KEYS[2], now, ARGV[2])
  return { 0, string.format('%.0f', now) }
end
-- The start log expires 2 s after the number's last start. Renewed at most every 0.5 s (the time
-- of the last renewal in the spacing hash), not on every start: one command less per send. The
-- starts that left the window go at the same time, not one by one on every start; those of the
-- last second before it stay, for a start counted at its place a little before now.
local function keepLog(now, renewedAt)
  if now - (tonumber(renewedAt or '0') or 0) > 500000 then
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now - WINDOW_US - 1000000))
    redis.call('PEXPIRE', KEYS[2], 2000)
    redis.call('HSET', KEYS[1], 'logRenewedAt', string.format('%.0f', now))
  end
end
local function clock()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end
`;

/**
 * How long, on this process's clock, the answer granting a start may take to arrive. A process
 * that stalls (a GC pause, a CPU-starved container) reads its answers late and would send their
 * starts together with the ones that follow on time, a burst the window never saw: at a runner
 * container's restart, 113 sends reached the service in one second at 100/s. A start answered
 * later than this is given back and taken again, so the window counts it when it goes out. Well
 * above a round trip to Redis (under 1 ms here), well under the window's 40 ms of room.
 */
export const FRESH_START_MS = 20;

/**
 * How late after its place a send may come and still count at its place (below, START). Timers and
 * a busy event loop wake sends 1 to 5 ms late at 1,000/s; the 40 ms of room covers this and the
 * way to the service (FRESH_START_MS bounds the answer's own delay).
 */
const PLACE_LATE_MS = 10;

/** Answered for a run (below) with no recipient left to send: it takes no start. */
const RUN_DONE = -2;

/** Answered for a run whose send window is not open now: it takes no start; its recipients stay pending. */
const WINDOW_CLOSED = -3;

/**
 * A claim this close to its window's close is refused: the send it starts must reach the service
 * before the window closes, and a B8 call answers in well under this.
 */
const CLOSE_MARGIN_MS = 2000;

/**
 * KEYS: spacing hash, start log, campaign hash, then the campaign's ledger, running set, outbox and
 * snapshot, then the number's copy of the suppression list (ledger.ts suppressedVerdict) and the
 * frequency cap's keys (cap.ts capKeys). ARGV: window room, member, "1" on a send's first call (it
 * takes the next place on the number's clock) or "0" after its wait or with its place taken by the
 * run's previous settle (ledger.ts, SETTLE_AND_PLACE: the window step only), then the run's first
 * and last+1 index ('' for a start without a claim), the campaign id, the claim token, 'again' or
 * '', the place or '', a send window's opening and close ('' '' without one), and the default cap
 * policy.
 *
 * A send's start and its claim in one call: the run's next recipient to send is found (openInRun,
 * ledger.ts) before a start is taken, so a run with nothing left takes none, and the start taken
 * is the claim's. Returns { 0, start time in microseconds, index, attempts, snapshot row },
 * { microseconds to wait, then call again with "0" (and the place, when one was taken) }, { NOT_RUNNING } or { RUN_DONE }.
 */
const START = `${LUA_TAKE}${LUA_RUN_CLAIM}
if ARGV[8] == 'again' then
  -- A start whose answer came late: its recipient stays claimed (it goes out, as one claimed before a pause does); only the start is taken anew.
  redis.call('ZREM', KEYS[2], ARGV[2])
  local again = redis.call('HMGET', KEYS[1], 'rate', 'logRenewedAt')
  local now = clock()
  local taken = take(tonumber(again[1] or '0'), now)
  if taken[1] == 0 then keepLog(now, again[2]) end
  return taken
end
-- The campaign's state and what the claim step's rules read of it (ledger.ts claimSettings), in one read.
local settings = redis.call('HMGET', KEYS[3], 'state', unpack(CLAIM_FIELDS))
if settings[1] ~= 'running' then return { ${NOT_RUNNING} } end
local c = claimSettings(settings, 2)
local now = clock()
local nowMs = string.format('%.0f', math.floor(now / 1000))
local aud = { recipients = KEYS[7], suppressed = KEYS[8], policy = KEYS[9], sends = KEYS[10], waiting = KEYS[11], default = ARGV[12] }
local idx, rec, row, phone
if ARGV[4] ~= '' then
  idx, rec, row, phone = openInRun(KEYS[3], KEYS[4], KEYS[5], KEYS[6], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[7], nowMs, ARGV[6], aud, c)
  if not idx then return { ${RUN_DONE} } end
  -- A send window's opening (campaigns/windows.ts, ARGV[10..11]: opened, closes; ms on the campaign's clock).
  if (ARGV[11] or '') ~= '' then
    local at = tonumber(nowMs) + c.offset
    if at < tonumber(ARGV[10]) or at >= tonumber(ARGV[11]) - ${CLOSE_MARGIN_MS} then return { ${WINDOW_CLOSED} } end
  end
end
local spacing = redis.call('HMGET', KEYS[1], 'rate', 'next', 'held', 'logRenewedAt')
local rate = tonumber(spacing[1] or '0')
local place = tonumber(ARGV[9] or '')
-- A place taken by a settle before a 429's hold began is given up: the send takes one after the hold.
if (ARGV[3] == '1' or (tonumber(spacing[3] or '0') or 0) > now) and rate and rate > 0 then
  local at = math.max(now, tonumber(spacing[2] or '0') or 0)
  redis.call('HSET', KEYS[1], 'next', string.format('%.0f', at + gapUs(rate)))
  if at > now then return { math.floor(at - now), string.format('%.0f', at) } end
  place = nil
end
-- A send at its place, or a little after it, counts at its place: places are spaced so that the
-- window always has room for them, so a send that woke a little less late than the one a window
-- earlier is not turned away (one gate call per send instead of 1.6 at 1,000/s). Later than
-- PLACE_LATE_MS it counts when it goes, and waits if the window is full; earlier, the same.
local when = now
if place and now >= place and now - place <= ${PLACE_LATE_MS * 1000} then when = place end
local taken = take(rate, when)
if taken[1] == 0 then keepLog(now, spacing[4]) end
if taken[1] ~= 0 or not idx then return taken end
local attempts = rec.a + (rec.s == 'p' and 1 or 0)
claimAt(KEYS[3], KEYS[4], idx, rec, ARGV[7], nowMs, aud, c, phone)
return { 0, taken[2], idx, attempts, row }
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
	keys.suppression.copy(from),
	...capKeys(keys, from, campaign),
];

type StartReply = [number, string?, number?, number?, string?];

/** Stale answers in a row after which a send keeps its start: a process slow on every call is slow, not stalled, and must not spin. */
const STALE_RETAKES = 3;

/** A place on the number's clock: when it comes by this process's clock (Date.now() ms), and its time on Redis's (µs). */
export interface Place {
	localMs: number;
	redisUs: string;
}

/**
 * Calls START until it answers a start or why none; `id` names the start in the window. `place`:
 * the place on the clock this send took ahead: it waits for it, then needs the window step only.
 */
async function takeStart(context: RunnerContext, send: Send, id: string, run: string[], stop: AbortSignal, place?: Place, opening: string[] = ['', '']): Promise<StartReply | NoStart | 'done' | 'closed'> {
	const start = luaScript(context.redis, 'convoStart', START, 11);
	const defaultCap = defaultCapPolicy(context.config);
	// The default cap policy is the last argument (ARGV[12]): after the window's two, always given.
	const call = (keys: string[], args: Array<string | number>) => start(keys, [...args, defaultCap]);
	const scriptKeys = startKeys(context, send);
	if (place !== undefined && place.localMs > Date.now()) await sleep(Math.ceil(place.localMs - Date.now()));
	// The first call may take the start itself: a process already stopping takes none.
	if (stop.aborted) return 'stopped';
	let asked = performance.now();
	let reply = (await call(scriptKeys, place === undefined ? [WINDOW_ROOM, id, '1', ...run, '', '', ...opening] : [WINDOW_ROOM, id, '0', ...run, '', place.redisUs, ...opening])) as StartReply;
	/** The claim of a start given back for being stale: the recipient stays claimed while its start is taken again. */
	let keptClaim: StartReply | undefined;
	let retakesLeft = STALE_RETAKES;
	for (;;) {
		if (reply[0] === NOT_RUNNING) return 'not running';
		if (reply[0] === RUN_DONE) return 'done';
		if (reply[0] === WINDOW_CLOSED) return 'closed';
		let placeUs = '';
		if (reply[0] === 0) {
			const stale = performance.now() - asked > FRESH_START_MS && retakesLeft-- > 0;
			if (!stale) return keptClaim ? [0, reply[1], keptClaim[2], keptClaim[3], keptClaim[4]] : reply;
			keptClaim ??= reply;
		} else {
			// The first call's answer names the place it took; a full window's does not.
			placeUs = reply[1] ?? '';
			// Whole milliseconds, rounded up: a timer cut short would start before its place and find the window full.
			await sleep(Math.ceil(reply[0] / 1000));
			// A claimed recipient goes out (a stop waits for sends in flight); one not yet claimed takes no start.
			if (stop.aborted && !keptClaim) return 'stopped';
		}
		asked = performance.now();
		const args = keptClaim ? [WINDOW_ROOM, id, '0', '', '', send.campaign, '', 'again', '', '', ''] : [WINDOW_ROOM, id, '0', ...run, '', placeUs, ...opening];
		reply = (await call(scriptKeys, args)) as StartReply;
	}
}

/**
 * Waits until this send of `campaign` from `from` may start (`id`: unique per attempt) and returns
 * the start's time on Redis's clock (ms), or why it took none.
 */
export async function waitForStart(context: RunnerContext, send: Send, id: string, stop: AbortSignal): Promise<number | NoStart> {
	const reply = await takeStart(context, send, id, ['', '', send.campaign, ''], stop);
	if (typeof reply === 'string') return reply === 'done' || reply === 'closed' ? 'not running' : reply;
	return Number(reply[1]) / 1000;
}

/**
 * Waits for the start of the next recipient to send among a run's indexes [first, end) and claims
 * it in the same step (`token`: the attempt's claim; `id`: this start's, unique; `place`: its
 * place on the clock if the run's previous settle took it). 'done' when the run has nobody left
 * to send (it took no start). `opening`: a send window's [opened, closes) on the campaign's clock
 * (ms): outside it (or within CLOSE_MARGIN_MS of its close) the answer is 'closed' and nobody is claimed.
 */
export async function startNextInRun(
	context: RunnerContext,
	send: Send,
	run: { first: number; end: number },
	claim: { token: string; id: string; place?: Place },
	stop: AbortSignal,
	opening?: [number, number],
): Promise<ClaimedStart | NoStart | 'done' | 'closed'> {
	const bound = opening ? [String(opening[0]), String(opening[1])] : ['', ''];
	const reply = await takeStart(context, send, claim.id, [String(run.first), String(run.end), send.campaign, claim.token], stop, claim.place, bound);
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
