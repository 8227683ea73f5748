/**
 * Campaigns that stop themselves when the service refuses what they cannot use now: the template
 * (paused or disabled for its quality, or refused with 403), the sending number (restricted, or
 * 403) or the API key (401). service.ts's table turns those answers into `blocked`; here:
 *
 * - the recipient goes back to pending (it was not sent: nothing is lost, no attempt is spent);
 * - the campaign's blocked streak (distinct recipients in a row, reset by a send claimed after the
 *   last refusal) grows, in the same Redis step, and the campaign pauses with the reason and the
 *   service's message once it reaches RUNNER_PAUSE_AFTER_BLOCKED, or at once for a 403, a 401 or a
 *   resume's re-check;
 * - then every other running campaign that uses the same template (any number), the same number,
 *   or, for the key, every one, pauses too, each in its own atomic step, and each pause hands its
 *   number to the number's other campaigns at once (handOverNumber).
 *
 * A resume of a campaign paused for a refusal re-checks with one send first (campaigns/control.ts
 * sets `recheck`; the start gate, lua/start-11.lua, lets one start through while the others wait):
 * a refusal of that send pauses it again at once. Every send still goes through the ledger's
 * claim and settle, so none is sent twice.
 */
import type { RunnerContext } from '../context';
import { transition } from '../campaigns/state';
import { redisScript } from '../redisScripts';
import type { CallOutcome } from '../service';
import { handOverNumber } from './feeder';

type Blocked = Extract<CallOutcome, { kind: 'blocked' }>;

interface Sending {
	id: string;
	from: string;
	templateId: string;
}

/**
 * Settles a blocked send back to pending and counts it; when that paused the campaign, pauses the
 * campaigns that share what was refused. 'paused' when this send's campaign paused.
 */
export async function settleBlocked(
	context: RunnerContext,
	campaign: Sending,
	claim: { index: number; token: string },
	blocked: Blocked,
): Promise<'ok' | 'lost' | 'paused'> {
	const { redis, keys, config, log } = context;
	const { id, from } = campaign;
	const run = redisScript(redis, 'settleBlocked');
	const result = String(
		await run(
			[
				keys.campaign(from, id),
				keys.ledger(from, id),
				keys.running(from),
				keys.outbox(from),
				keys.ticks(from, id),
				keys.recipients(from, id),
				keys.capSends(from),
			],
			[
				claim.index,
				claim.token,
				Date.now(),
				blocked.reason.replace(/\s+/g, ' '),
				id,
				blocked.atOnce ? 1 : config.RUNNER_PAUSE_AFTER_BLOCKED,
				blocked.refusal,
				blocked.message.replace(/\s+/g, ' '),
			],
		),
	) as 'ok' | 'lost' | 'paused';
	if (result !== 'paused') return result;
	// The service's message may name the sending number: the log says the reason only.
	log.warn({ campaign: id, reason: blocked.refusal }, 'campaign paused itself: the service refused its sends');
	await handOverNumber(context, id);
	await pauseSharing(context, campaign, blocked);
	return result;
}

/**
 * Pauses every other running campaign that uses what was refused: the template (from any number),
 * the number, or (the key) all of them. Each pause is its own atomic step and reports its event.
 */
async function pauseSharing(context: RunnerContext, refused: Sending, blocked: Blocked): Promise<void> {
	const { redis, keys, log } = context;
	for (const from of await redis.smembers(keys.numbers)) {
		if (blocked.refusal === 'number_refused' && from !== refused.from) continue;
		for (const id of await redis.smembers(keys.running(from))) {
			if (id === refused.id) continue;
			if (
				blocked.refusal === 'template_refused' &&
				(await redis.hget(keys.campaign(from, id), 'template_id')) !== refused.templateId
			)
				continue;
			const result = await transition(
				context,
				id,
				['running'],
				'paused',
				{
					last_error: `${blocked.reason.replace(/\s+/g, ' ')} (refused to campaign ${refused.id})`,
					paused_reason: blocked.refusal,
					paused_message: blocked.message.replace(/\s+/g, ' '),
					blocked_streak: 0,
				},
				{ event: 'campaign.paused' },
			);
			if (!result.changed) continue;
			log.warn(
				{ campaign: id, reason: blocked.refusal, with: refused.id },
				'campaign paused: the service refused what it sends with',
			);
			await handOverNumber(context, id);
		}
	}
}
