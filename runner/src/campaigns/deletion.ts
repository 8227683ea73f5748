/**
 * Deleting a finished campaign (`campaign delete`, `DELETE /api/campaigns/:id`): its recipients,
 * ledger, report, funnel and delivery tracking go from Redis, and it leaves every list. Without it
 * Redis grows with every campaign sent. Only a campaign that is completed, cancelled or failed (and
 * done moving its pending recipients) can go: nothing of one that may still send is touched.
 * docs/decisions/campaigns/finished-campaigns-can-be-deleted.md.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import type { RunnerContext } from '../context';
import { ConflictError, NotFoundError } from '../errors';
import { campaignNumber, forgetCampaign } from '../keyGroups';
import type { Keys } from '../keys';
import { releaseLock, takeLock } from '../lock';
import { redisScript } from '../redisScripts';
import { refuse } from './control';
import { findSchedule } from './schedule';
import type { CampaignState } from './store';

/** The states a campaign can be deleted in: nothing of it can send again but a retry, which deleting gives up. */
const DELETABLE: readonly CampaignState[] = ['completed', 'cancelled', 'failed'];

/** Tracking records read at a time, and due checks taken out per command, for a deleted campaign. */
const ASIDE_BATCH = 1000;

/** How often a delete looks again for delivery tracking's lock while a tick holds it. */
const LOCK_POLL_MS = 100;

/**
 * Deletes campaign `id` (finished) and answers `{ id, deleted: true }`. A delete a crash cut short
 * after its Redis step is finished by the next one; after that the campaign is not found.
 * Delivery tracking's lock is held meanwhile, so no tick checks or schedules the campaign's
 * messages while they go.
 */
export async function deleteCampaign(context: RunnerContext, id: string): Promise<{ id: string; deleted: true }> {
	const { redis, keys, config, log } = context;
	const from = await campaignNumber(context, id);
	if (from === undefined) {
		if (await findSchedule(context, id))
			throw new NotFoundError(
				`No campaign with id ${id}: it is a cron schedule, removed with \`campaign cancel ${id}\` or ` +
					`DELETE /api/campaigns/schedules/${id} (the campaigns it made stay, each deleted by its own id)`,
			);
		throw new NotFoundError(`No campaign with id ${id}`);
	}
	const state = await redis.hget(keys.campaign(from, id), 'state');
	if (state !== null && !DELETABLE.includes(state as CampaignState)) refuseIn(id, state);

	const token = randomBytes(8).toString('hex');
	const lockMs = config.RUNNER_TRACKING_LOCK;
	const waitUntil = Date.now() + lockMs;
	while ((await takeLock(redis, keys.trackLock, token, lockMs)) !== undefined) {
		if (Date.now() > waitUntil)
			throw new ConflictError(
				`Campaign ${id} was not deleted: delivery tracking held its lock for ${lockMs / 1000} s; try again`,
			);
		await sleep(LOCK_POLL_MS);
	}
	try {
		const answer = String(await redisScript(redis, 'deleteCampaign')(deletionKeys(keys, from, id), [id]));
		if (answer === 'finishing')
			throw new ConflictError(`Campaign ${id} is still moving its pending recipients to their end; try again`);
		if (answer !== 'deleted' && answer !== 'gone') refuseIn(id, answer);
		await dropDueChecks(context, from, id);
	} finally {
		await releaseLock(redis, keys.trackLock, token);
	}
	// The lists last: a crash before this leaves the id listed, and a delete again finishes it.
	await forgetCampaign(context, id);
	log.info({ campaign: id }, 'campaign deleted');
	return { id, deleted: true };
}

/** The deletion step's keys (lua/deleteCampaign-14.lua): the number's sets, then the campaign's own. */
export function deletionKeys(keys: Keys, from: string, id: string): string[] {
	const tracked = keys.tracked(from, id);
	const [hash, ...others] = keys.campaignKeys(from, id);
	return [
		keys.finishing(from),
		keys.unlisted(from),
		keys.tracking(from),
		keys.trackedAside(from, id),
		hash,
		tracked,
		...others.filter((key) => key !== tracked),
	];
}

/** Refused in `state`: a campaign that may still send is to be cancelled first. */
function refuseIn(id: string, state: string): never {
	const mayStillSend = state === 'running' || state === 'paused' || state === 'scheduled';
	refuse({ id, state: state as CampaignState }, 'deleted', DELETABLE, mayStillSend ? ' (cancel it first)' : '');
}

/** Takes the deleted campaign's delivery checks out of its number's schedule, then its aside records. */
async function dropDueChecks(context: RunnerContext, from: string, id: string): Promise<void> {
	const { redis, keys } = context;
	const aside = keys.trackedAside(from, id);
	let cursor = '0';
	do {
		const [next, entries] = await redis.hscan(aside, cursor, 'COUNT', ASIDE_BATCH);
		cursor = next;
		const members = entries.filter((_, i) => i % 2 === 0).map((index) => `${id}:${index}`);
		if (members.length > 0) await redis.zrem(keys.trackDue(from), ...members);
	} while (cursor !== '0');
	await redis.unlink(aside);
}
