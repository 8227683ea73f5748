/**
 * Delivery tracking: what became of each sent message after the service accepted it.
 *
 * The send path is not touched: tracking reads the ledger. Each campaign being tracked has a
 * cursor (`t_cursor` on its hash) that walks its ledger in index order and stops at the first
 * recipient still pending or claimed; every `sent` record it passes gets a tracking record (hash
 * `trk`, index -> JSON) and an entry `campaign:index` in its number's due set (a sorted set by
 * the time its next check is due: sent time + the schedule's step). Per recipient that is one
 * hash field and, while checks remain, one sorted-set member.
 *
 * A tick (jobs.ts, every second, one process at a time by a lock) takes places on the tracking
 * clock (RUNNER_TRACKING_RATE, for the whole account; never the send queue's limiter), claims as
 * many due entries (each claim moves the entry's due time a lease ahead, so a killed process's
 * claims come back once the lease ends), asks A1 at each place (B7 for a failure's reason, or B7
 * alone without the messaging API's credential) and writes the check's result, the next due time
 * and the campaign's counters in ONE script. A kill between a claim and its write repeats that
 * one check once; nothing written is repeated or lost.
 *
 * The campaign settles (event `campaign.delivery_settled`, once) when it is final, the cursor
 * has passed every recipient, and no check remains.
 */
import { campaignNumber } from '../keyGroups';
import type { RunnerContext } from '../context';
import type { CallOutcome } from '../service';
import type { RunnerConfig } from '../config';
import { releaseLock, renewLock, takeLock } from '../lock';
import { redisScript } from '../redisScripts';
import { decodeRecipient } from '../campaigns/schema';
import { recordReply } from './replies';
import { RequestLimiter } from './requestLimiter';
import { isoOrNull } from '../isoTime';

/** How delivery is known: A1 (the messaging API), B7 only (conversations), or not at all. */
export type TrackingMode = 'messaging_api' | 'conversations_only' | 'off';

export function trackingMode(config: RunnerConfig): TrackingMode {
	if (config.CONVO_BASE_URL && config.CONVO_ACCESS_TOKEN) return 'messaging_api';
	if (config.CONVO_EXTERNAL_URL && config.CONVO_API_KEY) return 'conversations_only';
	return 'off';
}

/** A recipient's delivery as the report shows it. */
export type Delivery = 'sent' | 'delivered' | 'read' | 'failed' | '';

/** The tracking record (JSON in the `trk` hash): short keys, one per recipient. */
interface Tracked {
	/** s sent, d delivered, r read, f failed, q requeued by a retry (its next message not sent yet). */
	s: 's' | 'd' | 'r' | 'f' | 'q';
	/** Checks written so far (the schedule's step). */
	k: number;
	/** The message id tracked. */
	m: string;
	/** Sent, delivered, read, failed at (epoch ms, as strings). */
	t: string;
	d?: string;
	r?: string;
	f?: string;
	/** The failure's reason (B7's error). */
	e?: string;
	/** 1: sent again once by `retry --undelivered` (never again). */
	x?: number;
	/** 1 while checks remain. */
	o?: number;
	/** Checks of this step the service left unanswered so far (asked again: UNANSWERED_RETRIES). */
	u?: number;
}

export interface DeliveryInfo {
	delivery: Delivery;
	delivered_at: string | null;
	read_at: string | null;
	delivery_error: string | null;
}

const DELIVERY_OF: Record<Tracked['s'], Delivery> = { s: 'sent', d: 'delivered', r: 'read', f: 'failed', q: '' };

export function deliveryInfo(text: string | null | undefined): DeliveryInfo {
	if (!text) return { delivery: '', delivered_at: null, read_at: null, delivery_error: null };
	const r = JSON.parse(text) as Tracked;
	return {
		delivery: DELIVERY_OF[r.s],
		delivered_at: isoOrNull(r.d),
		read_at: isoOrNull(r.r),
		delivery_error: r.s === 'f' ? (r.e ?? null) : null,
	};
}

/** The tracking records of these indexes (null where there is none). */
export async function trackedRecords(
	context: RunnerContext,
	campaign: { id: string; from: string },
	indexes: number[],
): Promise<Array<string | null>> {
	if (indexes.length === 0) return [];
	return context.redis.hmget(context.keys.tracked(campaign.from, campaign.id), ...indexes.map(String));
}

/** Ledger records a tick walks per campaign at most. */
const WALK_LIMIT = 5_000;
const WALK_CHUNK = 1_000;
/** Campaigns created this long before the last look are looked at again (a commit is listed late: keyGroups.ts). */
const SEEN_MARGIN_MS = 10 * 60_000;
/**
 * Added to a second before it is split among the checks: places a
 * full second apart at most `rate`, whatever the network's jitter.
 */
const GATE_GUARD_MS = 50;
/**
 * A check the service did not answer (unreachable, a timeout, a 5xx, a 429) is asked again at the
 * same step this many times before the step counts as done: a blip must not leave a message's
 * delivery unknown until the schedule's next step (10 minutes, an hour). Asked again after the
 * schedule's first gap, at most UNANSWERED_RETRY_MAX_MS.
 */
const UNANSWERED_RETRIES = 3;
const UNANSWERED_RETRY_MAX_MS = 30_000;

/** A call's outcome that says nothing of the message: the service did not answer it (a refusal is an answer). */
const unanswered = (outcome: CallOutcome | undefined) =>
	outcome !== undefined && (outcome.kind === 'retry' || outcome.kind === 'unknown' || outcome.kind === 'hold');

// Lua shared by the scripts below: settle the campaign's tracking when nothing is left.
type Script = (keys: string[], args: Array<string | number>) => Promise<unknown>;
const scripts = (context: RunnerContext) => ({
	enroll: redisScript(context.redis, 'trackEnroll') as Script,
	claim: redisScript(context.redis, 'trackClaim') as Script,
	result: redisScript(context.redis, 'trackResult') as Script,
	places: redisScript(context.redis, 'trackPlaces') as Script,
	requeue: redisScript(context.redis, 'trackRequeue') as Script,
});

/**
 * Makes sure a campaign's tracking is walked again from its first recipient (a retry made some
 * pending again, a reconcile proved some sent).
 */
export async function trackAgain(context: RunnerContext, campaign: { id: string; from: string }): Promise<void> {
	await context.redis
		.multi()
		.hset(context.keys.campaign(campaign.from, campaign.id), 't_cursor', 0)
		.sadd(context.keys.tracking(campaign.from), campaign.id)
		.exec();
}

/** Puts campaigns created since the last look into their number's tracking set (each settles and leaves it). */
async function enrollNewCampaigns(context: RunnerContext, now: number): Promise<void> {
	const { redis, keys } = context;
	const seen = Number((await redis.get(keys.trackSeen)) ?? now - SEEN_MARGIN_MS);
	const ids = await redis.zrangebyscore(keys.campaigns, seen - SEEN_MARGIN_MS, '+inf');
	for (const id of ids) {
		const from = await campaignNumber(context, id);
		if (from === undefined) continue;
		if ((await redis.hexists(keys.campaign(from, id), 't_settled')) === 1) continue;
		await redis.sadd(keys.tracking(from), id);
	}
	await redis.set(keys.trackSeen, String(now));
}

/** Moves a campaign's cursor over the records settled since the last tick, enrolling each sent one. */
async function walkCampaign(context: RunnerContext, from: string, id: string, mode: TrackingMode): Promise<void> {
	const { redis, keys, config } = context;
	const meta = keys.campaign(from, id);
	const [trackCursor, totalText, exists, abPhase, testCursor] = await redis.hmget(
		meta,
		't_cursor',
		'total',
		'id',
		'ab_phase',
		'ab_t_cursor',
	);
	// An A/B test's remainder waits, pending, for the winner: while it waits, the walk passes it on a
	// cursor of its own (ab_t_cursor) to track the test's sends, and t_cursor stays where the
	// remainder begins, so the walk after the decision finds every remainder send whichever moment
	// the decision came (lua/decideVariant-2.lua).
	const holdsRemainder = abPhase === 'testing' || abPhase === 'waiting';
	if (!exists) {
		await redis.srem(keys.tracking(from), id);
		return;
	}
	const cursor = Number((holdsRemainder ? testCursor : trackCursor) ?? 0);
	const total = Number(totalText ?? 0);
	let at = cursor;
	const triples: Array<string | number> = [];
	// A small first read: a campaign waiting on its first pending recipient (scheduled, paused, a
	// slow send) costs a few fields a round, not a chunk.
	let chunk = 64;
	walk: while (at < total && at - cursor < WALK_LIMIT) {
		const count = Math.min(chunk, total - at);
		const records = await context.ledger.read(id, at, count);
		const rows = holdsRemainder
			? await redis.hmget(keys.recipients(from, id), ...records.map((_, i) => String(at + i)))
			: [];
		chunk = Math.min(chunk * 4, WALK_CHUNK);
		for (const [i, record] of records.entries()) {
			const row = rows[i];
			if (record?.outcome === 'pending' && row && decodeRecipient(row).variant === 0) {
				at++;
				continue;
			}
			// Pending or claimed: not settled yet, so the cursor waits for it.
			if (!record || record.outcome === 'pending' || record.outcome === 'claimed') break walk;
			if (record.outcome === 'sent' && record.ref) triples.push(at, record.ref, record.lastAttemptAt ?? Date.now());
			at++;
		}
	}
	const keysOf = [meta, keys.tracked(from, id), keys.trackDue(from), keys.tracking(from), keys.outbox(from)];
	// A test's walk leaves t_cursor as it is (the script still refuses a walk another moved it under).
	const enrolled = await scripts(context).enroll(keysOf, [
		id,
		holdsRemainder ? Number(trackCursor ?? 0) : cursor,
		holdsRemainder ? Number(trackCursor ?? 0) : at,
		config.RUNNER_TRACKING_SCHEDULE[0],
		mode,
		Date.now(),
		...triples,
	]);
	// Enrolling is once per message id, so a test walk repeated after a lost write enrols nothing twice.
	if (holdsRemainder && enrolled !== -1) await redis.hset(meta, 'ab_t_cursor', at);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** What one check learnt: the new state's letter ('' nothing new) and a failure's reason. */
interface Learnt {
	to: '' | 's' | 'd' | 'r' | 'f';
	error: string;
}

const A1_STATES: Record<string, Learnt['to']> = { enqueued: 's', sent: 's', delivered: 'd', read: 'r', failed: 'f' };

/** B7's view of the message: its status and error, and when the recipient wrote after it. */
/**
 * Each process's limiter of its tracking requests: the places on the tracking clock space them,
 * and this holds the rate at the service where late timers or a stall on the way would bunch them
 * (requestLimiter.ts).
 */
const requestLimiters = new WeakMap<RunnerContext, RequestLimiter>();
function requestLimiter(context: RunnerContext): RequestLimiter {
	let limiter = requestLimiters.get(context);
	if (!limiter)
		requestLimiters.set(
			context,
			(limiter = new RequestLimiter(context.config.RUNNER_TRACKING_RATE, 1000 + GATE_GUARD_MS)),
		);
	return limiter;
}

async function conversationView(context: RunnerContext, phone: string, messageId: string) {
	const found = await requestLimiter(context).through(async () => context.service?.conversationByPhone(phone));
	if (unanswered(found)) return 'unanswered';
	if (!found || found.kind !== 'ok' || !found.conversation) return undefined;
	const messages = found.conversation.conversation.messages;
	const message = messages.find((each) => each.id === messageId);
	if (!message) return undefined;
	const sentAt = Date.parse(message.created_at);
	const replies = messages
		.filter((each) => each.direction === 'inbound' && Date.parse(each.created_at) > sentAt)
		.map((each) => Date.parse(each.created_at));
	return {
		status: message.status,
		error: message.error ?? '',
		firstReplyAt: replies.length > 0 ? Math.min(...replies) : undefined,
	};
}

/**
 * One check of one recipient: what it needs is read first, the service is asked at `at` (local
 * epoch ms: its place on the tracking clock, so nothing between the wait and the request can bunch
 * requests), then what it said is written (RESULT).
 */
async function checkOne(
	context: RunnerContext,
	from: string,
	member: string,
	mode: TrackingMode,
	at: number,
): Promise<void> {
	const { redis, keys, config } = context;
	const split = member.lastIndexOf(':');
	const id = member.slice(0, split);
	const index = Number(member.slice(split + 1));
	const [text, row] = await Promise.all([
		redis.hget(keys.tracked(from, id), String(index)),
		redis.hget(keys.recipients(from, id), String(index)),
	]);
	if (!text) {
		await redis.zrem(keys.trackDue(from), member);
		return;
	}
	const record = JSON.parse(text) as Tracked;
	const learnt: Learnt = { to: '', error: '' };
	const digits = row ? decodeRecipient(row).phone : undefined;
	const phone = async () => digits;
	await sleep(at - Date.now());
	/** The service did not answer this check: asked again at the same step while retries are left. */
	let askAgain = false;
	if (mode === 'messaging_api') {
		const status = await requestLimiter(context).through(async () => context.service?.messageStatus(record.m));
		if (status?.kind === 'ok' && status.state) learnt.to = A1_STATES[status.state] ?? '';
		else if (status && status.kind !== 'ok') {
			askAgain = unanswered(status);
			context.log.debug({ campaign: id, index, reason: status.reason }, 'delivery check not answered');
		}
		if (learnt.to === 'f') {
			// A1 says failed without a reason: B7's error of that message, asked once.
			const digits = await phone();
			const view = digits ? await conversationView(context, digits, record.m) : undefined;
			learnt.error = (typeof view === 'object' && view.error) || 'failed (the service gave no reason)';
		}
	} else {
		const digits = await phone();
		const view = digits ? await conversationView(context, digits, record.m) : undefined;
		askAgain = view === 'unanswered';
		if (typeof view === 'object') {
			// B7 shows DELIVERED before delivery: only READ and ERROR tell something.
			if (view.status === 'READ') learnt.to = 'r';
			if (view.status === 'ERROR') learnt.to = 'f';
			learnt.error = learnt.to === 'f' ? view.error || 'failed (the service gave no reason)' : '';
			if (view.firstReplyAt !== undefined) await recordReply(context, { id, from }, index, view.firstReplyAt);
		}
	}
	const schedule = config.RUNNER_TRACKING_SCHEDULE;
	const again = askAgain && (record.u ?? 0) < UNANSWERED_RETRIES;
	const nextStep = record.k + 1;
	const nextDue = again
		? Date.now() + Math.min(schedule[0], UNANSWERED_RETRY_MAX_MS)
		: nextStep < schedule.length
			? Number(record.t) + schedule[nextStep]
			: '';
	const keysOf = [
		keys.campaign(from, id),
		keys.tracked(from, id),
		keys.trackDue(from),
		keys.tracking(from),
		keys.outbox(from),
	];
	await scripts(context).result(keysOf, [
		id,
		index,
		record.m,
		record.k,
		learnt.to,
		Date.now(),
		learnt.error.replace(/\s+/g, ' '),
		nextDue,
		again ? '1' : '',
	]);
}

/** How long one tick goes on making rounds of checks while some are due (then the next tick takes over). */
const TICK_BUDGET_MS = 8_000;

/**
 * One tick of delivery tracking (the `track` job, jobs.ts), in one process at a time (a lock):
 * enroll new campaigns, then rounds while checks are due (up to TICK_BUDGET_MS): walk each tracked
 * campaign's cursor, and make up to a second's worth of the rate of checks, each at its place on
 * the tracking clock. Rounds follow each other on that clock, so the rate is held, not halved by
 * the wait for the next tick. Returns how many checks it made.
 */
export async function trackOnce(context: RunnerContext): Promise<number> {
	const { redis, keys, service } = context;
	if (!service) return 0;
	const mode: TrackingMode = service.hasMessagingApi ? 'messaging_api' : 'conversations_only';
	const token = `${process.pid}-${Date.now()}-${Math.random()}`;
	// One tick at a time across processes; a dead holder's lock lapses after RUNNER_TRACKING_LOCK.
	const lockMs = context.config.RUNNER_TRACKING_LOCK;
	if ((await takeLock(redis, keys.trackLock, token, lockMs)) !== undefined) return 0;
	try {
		const started = Date.now();
		await enrollNewCampaigns(context, started);
		let made = 0;
		for (;;) {
			const round = await trackRound(context, mode);
			made += round;
			if (round === 0 || Date.now() - started > TICK_BUDGET_MS) break;
			await renewLock(redis, keys.trackLock, token, lockMs);
		}
		return made;
	} finally {
		await releaseLock(redis, keys.trackLock, token);
	}
}

async function trackRound(context: RunnerContext, mode: TrackingMode): Promise<number> {
	const { redis, keys, config } = context;
	const numbers = await redis.smembers(keys.numbers);
	for (const from of numbers) {
		for (const id of await redis.smembers(keys.tracking(from))) await walkCampaign(context, from, id, mode);
	}
	const rate = config.RUNNER_TRACKING_RATE;
	const gapUs = Math.ceil(((1000 + GATE_GUARD_MS) * 1000) / rate);
	const due: Array<{ from: string; count: number }> = [];
	let wanted = 0;
	for (const from of numbers) {
		const count = Math.min(rate - wanted, await redis.zcount(keys.trackDue(from), '-inf', Date.now()));
		if (count > 0) due.push({ from, count });
		wanted += Math.max(0, count);
		if (wanted >= rate) break;
	}
	if (wanted === 0) return 0;
	const [redisNow, ...places] = (await scripts(context).places([keys.trackGate], [wanted, gapUs, 1000])) as number[];
	// Redis's clock to this process's: the places are times on Redis's clock, shared by every process.
	const skew = Date.now() - redisNow;
	const checks: Array<Promise<void>> = [];
	for (const { from, count } of due) {
		const take = Math.min(count, places.length);
		if (take <= 0) break;
		// A process killed before it writes a claimed check gives it back after RUNNER_TRACKING_CLAIM_LEASE.
		const members = (await scripts(context).claim(
			[keys.trackDue(from)],
			[Date.now(), take, config.RUNNER_TRACKING_CLAIM_LEASE],
		)) as string[];
		for (const member of members) {
			const at = (places.shift() as number) + skew;
			checks.push(
				checkOne(context, from, member, mode, at).catch((error: Error) =>
					context.log.warn(
						{ err: error.message, check: member },
						'delivery check failed; it comes back after its lease',
					),
				),
			);
		}
	}
	await Promise.all(checks);
	return checks.length;
}

/** What `retry --undelivered` may take: a reason's substring, failed at least this long ago. */
export interface UndeliveredFilter {
	reason?: string;
	afterMs?: number;
}

/**
 * Requeues (ledger back to pending) the recipients whose message the service's own record proves
 * failed, matching the filter, each once ever; returns how many.
 */
export async function requeueUndelivered(
	context: RunnerContext,
	campaign: { id: string; from: string; total: number },
	filter: UndeliveredFilter,
): Promise<number> {
	const { keys } = context;
	const now = Date.now();
	const reason = filter.reason?.toLowerCase();
	let moved = 0;
	for (let start = 0; start < campaign.total; start += WALK_CHUNK) {
		const indexes = Array.from({ length: Math.min(WALK_CHUNK, campaign.total - start) }, (_, i) => start + i);
		const records = await trackedRecords(context, campaign, indexes);
		const pairs: Array<string | number> = [];
		records.forEach((text, i) => {
			if (!text) return;
			const r = JSON.parse(text) as Tracked;
			if (r.s !== 'f' || r.x) return;
			if (reason !== undefined && !(r.e ?? '').toLowerCase().includes(reason)) return;
			if (filter.afterMs !== undefined && now - Number(r.f ?? now) < filter.afterMs) return;
			pairs.push(indexes[i], r.m);
		});
		if (pairs.length === 0) continue;
		moved += Number(
			await scripts(context).requeue(
				[
					keys.campaign(campaign.from, campaign.id),
					keys.tracked(campaign.from, campaign.id),
					keys.ledger(campaign.from, campaign.id),
					keys.tracking(campaign.from),
				],
				[now, ...pairs],
			),
		);
	}
	return moved;
}
