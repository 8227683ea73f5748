/**
 * A campaign's state changes, each one Lua script: the state is compared and set in one step, so
 * of two processes making the same change (two cancels, a cancel and a start) exactly one makes
 * it, and the event that reports it is written to the outbox in that same step (webhooks/events.ts).
 * The ledger's scripts (ledger.ts) make the two changes that happen per recipient: completed, and
 * paused after too many failures in a row.
 */
import type { RunnerEventType } from 'convo-contract';
import type { RunnerContext } from '../context';
import { campaignNumber } from '../keyGroups';
import { redisScript } from '../redisScripts';
import type { CampaignState } from './store';

export interface TransitionOptions {
	/** The event this change is (campaign.paused; campaign.finished for a change that moves nothing). */
	event?: RunnerEventType;
	/**
	 * The campaign ends with pending recipients still to move or sends in flight: it joins
	 * `finishing`, and campaign.finished follows when every recipient is final.
	 */
	ending?: boolean;
}

export type TransitionResult =
	| { changed: true; previous: CampaignState }
	| { changed: false; state: CampaignState | undefined };

/**
 * Sets the state to `to` if it is one of `from`, with `fields`, atomically. A draft that stops
 * being one leaves the drafts list after the step (a process that dies between leaves it there
 * until takeDraftPlace finds it no draft, or its 24 h are up: draft.ts).
 */
export async function transition(
	context: RunnerContext,
	id: string,
	from: readonly CampaignState[],
	to: CampaignState,
	fields: Record<string, string | number> = {},
	options: TransitionOptions = {},
): Promise<TransitionResult> {
	const { redis, keys } = context;
	const number = await campaignNumber(context, id);
	if (number === undefined) return { changed: false, state: undefined };
	const run = redisScript(redis, 'transition');
	const answer = String(
		await run(
			[
				keys.campaign(number, id),
				keys.running(number),
				keys.finishing(number),
				keys.outbox(number),
				keys.recipients(number, id),
				keys.ledger(number, id),
				keys.phones(number, id),
			],
			[
				id,
				Date.now(),
				to,
				`,${from.join(',')},`,
				options.event ?? '',
				options.ending ? '1' : '0',
				...Object.entries(fields).flat(),
			],
		),
	);
	if (answer.startsWith('ok:')) {
		const previous = answer.slice(3) as CampaignState;
		if (previous === 'draft') await redis.zrem(keys.drafts, id);
		return { changed: true, previous };
	}
	return { changed: false, state: answer.startsWith('no:') ? (answer.slice(3) as CampaignState) : undefined };
}

/** Called when an ended campaign may have no open recipient left; true for the one call that reported it. */
export async function reportFinished(context: RunnerContext, id: string): Promise<boolean> {
	const { redis, keys } = context;
	const number = await campaignNumber(context, id);
	if (number === undefined) return false;
	const run = redisScript(redis, 'finished');
	return (
		Number(await run([keys.finishing(number), keys.campaign(number, id), keys.outbox(number)], [id, Date.now()])) === 1
	);
}
