/**
 * Sends from one business number kept under its rate in every sliding second, across every
 * process. BullMQ's global limiter (limiterFor, jobs.ts) counts starts in fixed 50 ms slices, so a
 * sliding second can hold one slice more than the rate: 210 in some second at 200/s. So each send
 * also passes two steps here, both on Redis's clock (TIME), so processes on other machines agree:
 *
 * 1. Spacing: it takes the next start time from a per-number clock, 1 / gateRate(rate) after
 *    the previous one, and waits for it. Starts are even, not bursts at each slice's start (a
 *    send job's volley at a high rate takes RUNNER_SEND_VOLLEY's starts at one time), and
 *    no faster than the rate span lets through: spaced faster, the span bound every second and
 *    its waiters, all told to wake when the same oldest start left, woke together and all but one
 *    called again (13 calls per send at 200/s, 3 with this spacing).
 * 2. The rate span: a start is allowed only while fewer than `rate` sends started in the last
 *    rate span (rateSpanMs: a second and its room, RUNNER_RATE_ROOM) and the last second holds
 *    fewer than secondCap(rate) (a volley: room for it under volleyCap) in a sorted set of start
 *    times. A send that woke late (a busy event loop, a GC pause) and would bunch with the next
 *    ones waits here until there is room; one whose answer came late is taken again (freshStartMs).
 *
 * The limiter stays as the coarse gate that keeps workers from taking more jobs than the rate.
 *
 * Both steps first look at the send's campaign: a job of a campaign that is not running (paused,
 * cancelled, failed) takes no start and no place in the rate span, so it costs the other campaigns
 * on the number nothing here. The send processor then takes the campaign's other queued jobs out
 * of the queue (feeder.ts, dropQueuedSends), so they do not wait their turn at the limiter either.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { RunnerContext } from '../context';
import { redisScript } from '../redisScripts';
import { freshStartMs, placeLateMs, roomOf, SPAN_ROOM } from './startGateMath';
import { capKeys, defaultCapPolicy } from '../audience/cap';

export { gateRate, RATE_SPAN_MS, rateSpanMs, secondCap } from './startGateMath';

/** Answered by both steps for a send whose campaign is not running: it takes no start. */
const NOT_RUNNING = -1;

/**
 * How long, on this process's clock, the answer granting a start may take to arrive at the default
 * room (freshStartMs: half the room). A process that stalls (a GC pause, a CPU-starved container)
 * reads its answers late and would send their starts together with the ones that follow on time, a
 * burst the rate span never saw: at a runner container's restart, 113 sends reached the service in
 * one second at 100/s. A start answered later than this is given back and taken again, so the rate
 * span counts it when it goes out. Well above a round trip to Redis (under 1 ms here).
 *
 * A send may also come a little after its place and still count at it (placeLateMs, a quarter of the
 * room; lua/start-11.lua): timers and a busy event loop wake sends 1 to 5 ms late at 1,000/s.
 */
export const FRESH_START_MS = freshStartMs(SPAN_ROOM);

/** Answered for a send job (below) with no recipient left to send: it takes no start. */
const JOB_DONE = -2;

/** Answered for a send job whose send window is not open now: it takes no start; its recipients stay pending. */
const WINDOW_CLOSED = -3;

/**
 * A claim this close to its send window's close is refused: the send it starts must reach the service
 * before the send window closes, and a B8 call answers in well under this.
 */
const CLOSE_MARGIN_MS = 2000;

/**
 * How long a send of a campaign resumed after a refusal waits before it looks again while the
 * re-check's one send is out (sending/refusals.ts): about a B8 round trip.
 */
const RECHECK_WAIT_MS = 200;

/** The number's rate, as the feeder applies it (the strictest of its running campaigns). */
export async function setSpacingRate(context: RunnerContext, from: string, ratePerSecond: number): Promise<void> {
	await context.redis.hset(context.keys.spacing(from), 'rate', ratePerSecond);
}

/** Why a send took no start: its process is stopping, or its campaign is not running (paused, ended). */
type NoStart = 'stopped' | 'not running';

/** A send job's recipient claimed with its volley's start. */
interface ClaimedRecipient {
	index: number;
	/** Claims of this recipient so far, this one included. */
	attempts: number;
	/** Its snapshot row; undefined if the snapshot lacks it. */
	row?: string;
}

/** A send job's volley of recipients whose starts were taken and claimed in the same step. */
export interface ClaimedVolley {
	/** When the starts' answer came (performance.now()): out later than freshStartMs after, they are taken again. */
	answeredAt: number;
	/** The volley's first start's name in the start log. */
	startId: string;
	/** In index order; one when the job sends one at a time. */
	recipients: ClaimedRecipient[];
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

/** { 0, start µs, then index, attempts, row per claimed recipient }, or { µs to wait, place? }, or a code. */
type StartReply = [number, string?, ...Array<number | string | null | undefined>];

/** The recipients a start's answer claimed: index, attempts and row each, after the code and the start time. */
function claimedIn(reply: StartReply): ClaimedRecipient[] {
	const recipients: ClaimedRecipient[] = [];
	for (let at = 2; at + 1 < reply.length; at += 3)
		recipients.push({
			index: Number(reply[at]),
			attempts: Number(reply[at + 1]),
			row: (reply[at + 2] as string) ?? undefined,
		});
	return recipients;
}

/**
 * Stale answers in a row after which a send keeps its start: a
 * process slow on every call is slow, not stalled, and must not spin.
 */
const STALE_RETAKES = 3;

/** A process that keeps stale starts says so at most this often. */
const STALE_WARNING_EVERY_MS = 60_000;
/** When each process's log (the context's) last said so. */
const staleWarnedAt = new WeakMap<object, number>();

/**
 * A send kept a start answered late STALE_RETAKES times in a row: its sends may reach the service
 * bunched beyond the room, so the operator hears of it (once a minute at most).
 */
function warnKeptStale(context: RunnerContext, campaign: string) {
	const { config, log } = context;
	if (performance.now() - (staleWarnedAt.get(log) ?? -Infinity) < STALE_WARNING_EVERY_MS) return;
	staleWarnedAt.set(log, performance.now());
	log.warn(
		{ campaign, freshMs: freshStartMs(roomOf(config)), roomMs: config.RUNNER_RATE_ROOM },
		'answers from Redis reached this process late again and again: a send kept a stale start and may reach ' +
			'the service above its rate; give the process more CPU or raise RUNNER_RATE_ROOM',
	);
}

/**
 * Judges a send's answers in a row: whether the one asked for at `asked` (performance.now()) came
 * later than freshStartMs and is to be taken again. After STALE_RETAKES late answers the next late
 * one is kept (warnKeptStale says so).
 */
function lateAnswers(context: RunnerContext, campaign: string): (asked: number) => boolean {
	const freshMs = freshStartMs(roomOf(context.config));
	let retakesLeft = STALE_RETAKES;
	return (asked) => {
		if (performance.now() - asked <= freshMs) return false;
		if (retakesLeft-- > 0) return true;
		warnKeptStale(context, campaign);
		return false;
	};
}

/**
 * A place on the number's clock: when it comes by this process's clock (Date.now() ms), and its time on Redis's (µs).
 */
export interface Place {
	localMs: number;
	redisUs: string;
}

/**
 * lua/start-11.lua for `send`, its keys and the arguments always the same: the room first (ARGV[1]),
 * and after the send window's two, the default cap policy, the margins, the re-check's and the
 * volley's span; a start taken again adds its volley's size.
 */
function startCall(
	context: RunnerContext,
	send: Send,
): (args: Array<string | number>, againSize?: number) => Promise<unknown> {
	const start = redisScript(context.redis, 'start');
	const keys = startKeys(context, send);
	const { config } = context;
	const room = roomOf(config);
	const recheckHoldMs = config.RUNNER_HTTP_DEADLINE + 10_000;
	const tail = [
		defaultCapPolicy(config),
		CLOSE_MARGIN_MS,
		placeLateMs(room),
		recheckHoldMs,
		RECHECK_WAIT_MS,
		config.RUNNER_SEND_VOLLEY,
	];
	return (args, againSize) => start(keys, [room, ...args, ...tail, ...(againSize ? [againSize] : [])]);
}

/** The arguments after the room of a start taken again (start-11.lua's 'again'): its recipients stay claimed. */
const againArgs = (id: string, campaign: string) => [id, '0', '', '', campaign, '', 'again', '', '', ''];

/**
 * Calls lua/start-11.lua until it answers a start or why none; `id` names the start in the start log. `place`:
 * the place on the clock this send took ahead: it waits for it, then needs the rate span step only.
 */
async function takeStart(
	context: RunnerContext,
	send: Send,
	id: string,
	range: string[],
	stop: AbortSignal,
	place?: Place,
	opening: string[] = ['', ''],
): Promise<StartReply | NoStart | 'done' | 'closed'> {
	const call = startCall(context, send);
	const retakeLate = lateAnswers(context, send.campaign);
	if (place !== undefined && place.localMs > Date.now()) await sleep(Math.ceil(place.localMs - Date.now()));
	// The first call may take the start itself: a process already stopping takes none.
	if (stop.aborted) return 'stopped';
	let asked = performance.now();
	let reply = (await call(
		place === undefined ? [id, '1', ...range, '', '', ...opening] : [id, '0', ...range, '', place.redisUs, ...opening],
	)) as StartReply;
	/** The claim of a start given back for being stale: the recipient stays claimed while its start is taken again. */
	let keptClaim: StartReply | undefined;
	for (;;) {
		if (reply[0] === NOT_RUNNING) return 'not running';
		if (reply[0] === JOB_DONE) return 'done';
		if (reply[0] === WINDOW_CLOSED) return 'closed';
		let placeUs = '';
		if (reply[0] === 0) {
			if (!retakeLate(asked)) return keptClaim ? [0, reply[1], ...keptClaim.slice(2)] : reply;
			keptClaim ??= reply;
		} else {
			// The first call's answer names the place it took; a full span's does not.
			placeUs = reply[1] ?? '';
			// Whole milliseconds, rounded up: a timer cut short would start before its place and find the span full.
			await sleep(Math.ceil(reply[0] / 1000));
			// A claimed recipient goes out (a stop waits for sends in flight); one not yet claimed takes no start.
			if (stop.aborted && !keptClaim) return 'stopped';
		}
		asked = performance.now();
		reply = (
			keptClaim
				? await call(againArgs(id, send.campaign), claimedIn(keptClaim).length)
				: await call([id, '0', ...range, '', placeUs, ...opening])
		) as StartReply;
	}
}

/**
 * Waits until this send of `campaign` from `from` may start (`id`: unique per attempt) and returns
 * the start's time on Redis's clock (ms), or why it took none.
 */
export async function waitForStart(
	context: RunnerContext,
	send: Send,
	id: string,
	stop: AbortSignal,
): Promise<number | NoStart> {
	const reply = await takeStart(context, send, id, ['', '', send.campaign, ''], stop);
	if (typeof reply === 'string') return reply === 'done' || reply === 'closed' ? 'not running' : reply;
	return Number(reply[1]) / 1000;
}

/**
 * Waits for the start of the next recipient to send among a send job's indexes [first, end) and claims
 * it in the same step (`token`: the attempt's claim; `id`: this start's, unique; `place`: its
 * place on the clock if the job's previous settle took it). 'done' when the job has nobody left
 * to send (it took no start). `opening`: a send window's [opened, closes) on the campaign's clock
 * (ms): outside it (or within CLOSE_MARGIN_MS of its close) the answer is 'closed' and nobody is claimed.
 */
export async function startNextInJob(
	context: RunnerContext,
	send: Send,
	range: { first: number; end: number },
	claim: { token: string; id: string; place?: Place },
	stop: AbortSignal,
	opening?: [number, number],
): Promise<ClaimedVolley | NoStart | 'done' | 'closed'> {
	const bound = opening ? [String(opening[0]), String(opening[1])] : ['', ''];
	const reply = await takeStart(
		context,
		send,
		claim.id,
		[String(range.first), String(range.end), send.campaign, claim.token],
		stop,
		claim.place,
		bound,
	);
	if (typeof reply === 'string') return reply;
	return { answeredAt: performance.now(), startId: claim.id, recipients: claimedIn(reply) };
}

/**
 * Takes a claimed volley's starts again (`id`: its first start's name in the start log, `size`: its
 * starts): they were answered longer than freshStartMs ago and have not gone out yet (a busy event
 * loop, a slow budget count), so going out now would bunch them with the starts taken since. Their
 * recipients stay claimed; they wait while the rate span is full; an answer to this call that is
 * itself read late is taken again (up to STALE_RETAKES times). A stop does not interrupt it: a
 * claimed recipient goes out.
 */
export async function takeStartAgain(context: RunnerContext, send: Send, id: string, size = 1): Promise<void> {
	const call = startCall(context, send);
	const retakeLate = lateAnswers(context, send.campaign);
	for (;;) {
		const asked = performance.now();
		const reply = (await call(againArgs(id, send.campaign), size)) as StartReply;
		if (reply[0] === 0) {
			// Its own answer read late (the stall that made it stale often lasts): taken again, as takeStart does.
			if (!retakeLate(asked)) return;
			continue;
		}
		await sleep(Math.ceil(reply[0] / 1000));
	}
}

export async function holdStarts(context: RunnerContext, from: string, waitMs: number): Promise<void> {
	const run = redisScript(context.redis, 'holdStarts');
	await run([context.keys.spacing(from)], [waitMs]);
}

/**
 * A campaign on `from` just stopped: its sends waiting at the gate hold places on the number's
 * clock they will not use (they find the campaign stopped when their time comes). BullMQ's
 * limiter hands jobs out at the rate and the gate lets 0.96 of it through, so the waiters grow by
 * 4% of the rate each second up to the worker slots (RUNNER_CONCURRENCY per process): by that
 * reckoning, at 20/s after 25 s, about a second of the number's starts (less on a loaded machine,
 * where workers lag and fewer wait). Handing the clock back lets the
 * number's other campaigns start now instead. A send of another campaign already waiting keeps its
 * place, so for a moment starts may come closer than the spacing; the rate span still holds the
 * number to its rate. Returns the milliseconds given back.
 */
export async function restartSpacing(context: RunnerContext, from: string): Promise<number> {
	const run = redisScript(context.redis, 'restartSpacing');
	return Number(await run([context.keys.spacing(from)], [])) / 1000;
}
