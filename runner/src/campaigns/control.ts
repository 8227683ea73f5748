/**
 * Operator acts on a campaign, and the campaign-wide stop: pause, resume, cancel, change the rate,
 * retry what is proven not sent, fail. State changes are single atomic Redis scripts (state.ts)
 * that every process sees at its next start or claim, so a pause holds everywhere at once (the
 * start gate and the claim check the state), and two processes making the same change make it,
 * and report it, once.
 */
import { retryUndeliveredBody, setCampaignRateBody, type RetryUndeliveredBody } from 'convo-contract';

import { EXPIRED_REASON, type Outcome } from '../ledger';
import type { RunnerContext } from '../context';
import { UserError } from '../errors';
import { settingsError } from '../settingNames';
import { findCampaign, getCampaign, type CampaignRecord, type CampaignState } from './store';
import { reportFinished, transition } from './state';
import { requeueUndelivered, trackAgain } from '../tracking/tracking';
import { openCopy } from '../audience/suppression';
import { isRefusal } from '../service';

/** Moves every recipient in state `from` to `to`, chunk by chunk. */
async function moveAll(
	context: RunnerContext,
	campaign: CampaignRecord,
	from: Outcome,
	to: Outcome,
	reason = '',
): Promise<number> {
	let moved = 0;
	for await (const chunk of context.ledger.walk(campaign.id, campaign.total)) {
		const indexes = chunk.records.flatMap((record, i) => (record?.outcome === from ? [chunk.from + i] : []));
		moved += await context.ledger.moveMany(campaign.id, from, to, indexes, reason);
	}
	return moved;
}

/**
 * A campaign whose end (`--end`) passed: its pending recipients become expired, and it completes
 * once its claims in flight settle (the claim step expires any pending recipient a send meets
 * meanwhile). Returns how many moved.
 */
export async function expireAtEnd(context: RunnerContext, campaign: CampaignRecord): Promise<number> {
	const moved = await moveAll(context, campaign, 'pending', 'expired', EXPIRED_REASON);
	await context.ledger.finishIfDone(campaign.id);
	return moved;
}

/** What a campaign's pending recipients become when it ends without sending them. */
const PENDING_BECOMES: Partial<Record<CampaignState, Outcome>> = { cancelled: 'cancelled', failed: 'not_sent' };

/** The states a campaign can be cancelled or failed from. */
const ENDABLE: CampaignState[] = ['draft', 'scheduled', 'running', 'paused'];

/**
 * Ends a campaign that may still have pending recipients or sends in flight. The id joins the
 * `finishing` set in the same step as the state change and leaves it only when every recipient is
 * final (the pending moved, each send in flight settled), so a process killed half-way leaves the
 * rest to the next feeder tick, on any process, never pending for good; campaign.finished is
 * reported then, with the counts as they stay. Undefined when the campaign was no longer in one
 * of `from` (another process ended it first).
 */
async function endWithPending(
	context: RunnerContext,
	id: string,
	state: 'cancelled' | 'failed',
	reason: string,
	from: CampaignState[] = ENDABLE,
): Promise<number | undefined> {
	const result = await transition(
		context,
		id,
		from,
		state,
		{ finished_at: Date.now(), last_error: reason },
		{ ending: true },
	);
	if (!result.changed) return undefined;
	return finishPending(context, id);
}

/**
 * Moves the pending recipients of an ended campaign (see endWithPending), and reports it finished
 * once no send is in flight either; returns how many moved. Called again at each feeder tick
 * while the campaign is in `finishing`: a send in flight at the end that settles back to pending
 * (a 5xx, a 429) is moved then, and a claim whose process died is turned unknown once no live
 * attempt can hold it, as the watchdog does for a running campaign.
 */
export async function finishPending(context: RunnerContext, id: string): Promise<number> {
	const campaign = await findCampaign(context, id);
	const to = campaign && PENDING_BECOMES[campaign.state];
	const moved =
		campaign && to && campaign.counts.pending > 0
			? await moveAll(context, campaign, 'pending', to, campaign.lastError ?? '')
			: 0;
	if (campaign && campaign.counts.claimed > 0 && Date.now() - (campaign.finishedAt ?? 0) > claimLifetime(context))
		await expireDeadClaims(context, campaign);
	await reportFinished(context, id);
	return moved;
}

/** How long a live attempt can hold a claim: its request's deadline, and room to settle it. */
const claimLifetime = (context: RunnerContext) => context.config.RUNNER_HTTP_DEADLINE + 10_000;

/** Claims older than any live attempt can hold become unknown (they may have sent: never resent); returns how many. */
export async function expireDeadClaims(context: RunnerContext, campaign: CampaignRecord): Promise<number> {
	const staleBefore = Date.now() - claimLifetime(context);
	let expired = 0;
	for await (const { from, records } of context.ledger.walk(campaign.id, campaign.total)) {
		const stale = records.flatMap((record, i) =>
			record?.outcome === 'claimed' && (record.lastAttemptAt ?? 0) < staleBefore ? [from + i] : [],
		);
		expired += await context.ledger.expireClaims(campaign.id, staleBefore, stale);
	}
	return expired;
}

/** A control act the campaign's state does not allow; `hint` says what to do first. */
export function refuse(
	campaign: Pick<CampaignRecord, 'id' | 'state'>,
	act: string,
	allowed: readonly CampaignState[],
	hint = '',
): never {
	throw new UserError(
		`Campaign ${campaign.id} is ${campaign.state}; it can be ${act} only when ${allowed.join(' or ')}${hint}`,
	);
}

const PAUSABLE: CampaignState[] = ['running', 'scheduled'];

export async function pauseCampaign(context: RunnerContext, id: string): Promise<CampaignState> {
	const campaign = await getCampaign(context, id);
	if (campaign.state === 'paused') return 'paused';
	if (!PAUSABLE.includes(campaign.state)) refuse(campaign, 'paused', PAUSABLE);
	const result = await transition(
		context,
		id,
		PAUSABLE,
		'paused',
		{ last_error: 'paused by the operator', paused_reason: 'operator', paused_message: '' },
		{ event: 'campaign.paused' },
	);
	// Changed meanwhile by another process: paused already is what was asked; anything else is refused as it is now.
	if (!result.changed && result.state !== 'paused') refuse(await getCampaign(context, id), 'paused', PAUSABLE);
	if (result.changed) context.log.info({ campaign: id }, 'campaign paused');
	return 'paused';
}

/**
 * Resume re-walks the ledger from the start: recipients left pending while paused are fed again.
 * One paused because the service refused its sends re-checks with one send first (sending/refusals.ts).
 */
export async function resumeCampaign(context: RunnerContext, id: string): Promise<CampaignState> {
	const campaign = await getCampaign(context, id);
	if (campaign.state === 'running') return 'running';
	if (campaign.state !== 'paused') refuse(campaign, 'resumed', ['paused']);
	await feedAgain(context, campaign);
	const result = await transition(context, id, ['paused'], 'running', {
		cursor: 0,
		failure_streak: 0,
		blocked_streak: 0,
		last_error: '',
		paused_reason: '',
		paused_message: '',
		...(isRefusal(campaign.pausedReason) ? { recheck: '1' } : {}),
		last_progress_at: Date.now(),
		running_since: Date.now(),
	});
	if (!result.changed) return (await getCampaign(context, id)).state;
	await context.ledger.finishIfDone(id);
	context.log.info({ campaign: id }, 'campaign resumed');
	return (await getCampaign(context, id)).state;
}

export async function cancelCampaign(
	context: RunnerContext,
	id: string,
): Promise<{ state: CampaignState; cancelled: number }> {
	const campaign = await getCampaign(context, id);
	if (!ENDABLE.includes(campaign.state)) refuse(campaign, 'cancelled', ENDABLE);
	const cancelled = await endWithPending(context, id, 'cancelled', 'cancelled by the operator');
	if (cancelled === undefined) refuse(await getCampaign(context, id), 'cancelled', ENDABLE);
	context.log.info({ campaign: id, cancelled }, 'campaign cancelled');
	return { state: 'cancelled', cancelled };
}

/** A 401, or a 403 for the template, number or agent: no recipient can succeed, so stop at the first. */
export async function failCampaign(context: RunnerContext, id: string, reason: string): Promise<void> {
	// Sends in flight that get the same answer find it failed (or cancelled) already: one end, one event.
	const notSent = await endWithPending(context, id, 'failed', reason, ['scheduled', 'running', 'paused']);
	if (notSent !== undefined) context.log.error({ campaign: id, reason, notSent }, 'campaign failed');
}

/**
 * A windowed campaign's zones start their lists over, as the
 * cursor does (sending/feeder.ts feedZones), before it runs again.
 */
async function feedAgain(context: RunnerContext, campaign: CampaignRecord): Promise<void> {
	if (campaign.window) await context.redis.del(context.keys.zoneFeed(campaign.from, campaign.id));
}

const RETRYABLE: CampaignState[] = ['paused', 'completed', 'cancelled', 'failed'];

/** Sends again the recipients proven not sent (an explicit operator act; never automatic). */
export async function retryNotSent(
	context: RunnerContext,
	id: string,
): Promise<{ state: CampaignState; requeued: number }> {
	const campaign = await getCampaign(context, id);
	if (!RETRYABLE.includes(campaign.state)) refuse(campaign, 'retried', RETRYABLE);
	// A finished campaign's number may have let its copy of the suppression list go: it sends again only with one.
	await openCopy(context, campaign.from, id);
	const requeued = await moveAll(context, campaign, 'not_sent', 'pending');
	if (requeued === 0) return { state: campaign.state, requeued };
	// The tracking cursor passed them: it walks again from the start and finds their messages once sent.
	await trackAgain(context, campaign);
	await feedAgain(context, campaign);
	await transition(context, id, RETRYABLE, 'running', {
		cursor: 0,
		failure_streak: 0,
		finished_at: '',
		last_error: '',
		last_progress_at: Date.now(),
		running_since: Date.now(),
	});
	context.log.info({ campaign: id, requeued }, 'campaign retrying recipients proven not sent');
	return { state: 'running', requeued };
}

/**
 * Sends again the recipients whose message the service's own record (A1, or B7's ERROR) proved
 * failed, never one delivered, read or still moving; each once ever (their tracking records are
 * marked in the same step that puts them back to pending, so a second call finds none).
 * `names`: the options as the client calls them.
 */
export async function retryUndelivered(
	context: RunnerContext,
	id: string,
	input: RetryUndeliveredBody,
	names: Record<string, string> = {},
): Promise<{ state: CampaignState; requeued: number }> {
	const parsed = retryUndeliveredBody.safeParse(input);
	if (!parsed.success) throw settingsError(parsed.error, names);
	const campaign = await getCampaign(context, id);
	if (!RETRYABLE.includes(campaign.state)) refuse(campaign, 'retried', RETRYABLE);
	// A finished campaign's number may have let its copy of the suppression list go: it sends again only with one.
	await openCopy(context, campaign.from, id);
	const requeued = await requeueUndelivered(context, campaign, {
		reason: parsed.data.reason,
		afterMs: parsed.data.after,
	});
	if (requeued === 0) return { state: campaign.state, requeued };
	await feedAgain(context, campaign);
	await transition(context, id, RETRYABLE, 'running', {
		cursor: 0,
		failure_streak: 0,
		finished_at: '',
		last_error: '',
		last_progress_at: Date.now(),
		running_since: Date.now(),
	});
	context.log.info({ campaign: id, requeued }, 'campaign retrying recipients whose delivery failed');
	return { state: 'running', requeued };
}

export async function setCampaignRate(context: RunnerContext, id: string, rate: number): Promise<number> {
	// The API's body rule, so the CLI's `campaign rate` is refused with the same words.
	const checked = setCampaignRateBody.safeParse({ rate });
	if (!checked.success) throw settingsError(checked.error, {});
	const campaign = await getCampaign(context, id);
	await context.redis.hset(context.keys.campaign(campaign.from, id), 'rate', rate);
	return rate;
}

/** A start job that found no campaign: BullMQ tries it again (COMMIT_WAIT, jobs.ts). */
class CampaignNotCommitted extends Error {}

/**
 * Starts a scheduled campaign (the start job's processor, jobs.ts). One not committed yet is looked for again while
 * `mayWait`; after that its create died before its commit and the job does nothing.
 */
export async function startScheduledCampaign(
	context: RunnerContext,
	id: string,
	dueAt: number,
	mayWait = false,
): Promise<CampaignState | undefined> {
	const campaign = await findCampaign(context, id);
	if (!campaign && mayWait)
		throw new CampaignNotCommitted(`campaign ${id} is not committed yet; its start looks again`);
	if (!campaign) return undefined;
	if (campaign.state !== 'scheduled') return campaign.state;
	const late = Date.now() - dueAt;
	if (late > context.config.RUNNER_MAX_LATENESS) {
		const reason =
			`skipped: it fell due at ${new Date(dueAt).toISOString()} and no runner took it up until ` +
			`${Math.round(late / 1000)} s later (limit ${context.config.RUNNER_MAX_LATENESS / 1000} s)`;
		await endWithPending(context, id, 'cancelled', reason, ['scheduled']);
		context.log.warn({ campaign: id }, reason);
		return 'cancelled';
	}
	const result = await transition(context, id, ['scheduled'], 'running', {
		last_progress_at: Date.now(),
		running_since: Date.now(),
	});
	if (!result.changed) return result.state ?? 'cancelled';
	context.log.info({ campaign: id }, 'scheduled campaign started');
	return 'running';
}
