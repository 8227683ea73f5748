/**
 * Resolving `unknown` recipients from the service's own records, never by a blind resend: B7 looks
 * up the recipient's conversation by phone. An outbound message created after the first claim
 * (less a clock-skew margin) from the campaign's own number proves the send: `sent` with that
 * message's id. B7 does not say which number sent a message, so B4 (the contact's messages, with
 * their sender) is asked which: another campaign's message to the same phone from another number
 * proves nothing (two campaigns with overlapping audiences run side by side under the daily
 * limit). When B4 cannot answer, any outbound message counts, erring toward "sent" (never twice).
 * A 404, or a conversation without such a message, proves the opposite: `not_sent`, which only
 * `campaign retry --not-sent` sends again. Anything else (409, 5xx, no answer) stays unknown.
 */
import { decodeRecipient } from './schema';
import { getCampaign } from './store';
import { trackAgain } from '../tracking/tracking';
import type { RunnerContext } from '../context';
import type { ConvoService } from '../service';
import { UserError } from '../errors';

/** Service and runner clocks differ a little; erring early only ever errs toward "sent". */
const CLOCK_SKEW_MS = 5_000;

export interface ReconcileResult {
	checked: number;
	sent: number;
	not_sent: number;
	still_unknown: number;
}

/**
 * The outbound message since `since` that the campaign's number `from` sent the contact, by B4; no
 * such message when B4 lists none from it; `outbound` (B7's, whoever sent it) when B4 cannot answer.
 */
async function fromOwnNumber(
	service: ConvoService,
	contactId: string,
	from: string,
	since: number,
	outbound: { id: string },
): Promise<{ id: string } | undefined> {
	const answer = await service.contactMessages(contactId);
	if (answer.kind !== 'ok' || !answer.messages) return outbound;
	const own = answer.messages.find(
		(message) => message.from === from && message.status !== 'received' && Date.parse(message.createdAt) >= since,
	);
	return own ? { id: own.uuid } : undefined;
}

export async function reconcileCampaign(context: RunnerContext, id: string): Promise<ReconcileResult> {
	const service = context.service;
	if (!service) throw new UserError('reconcile needs CONVO_EXTERNAL_URL and CONVO_API_KEY to look recipients up');
	const campaign = await getCampaign(context, id);
	const result: ReconcileResult = { checked: 0, sent: 0, not_sent: 0, still_unknown: 0 };
	for await (const chunk of context.ledger.walk(id, campaign.total)) {
		for (const [offset, record] of chunk.records.entries()) {
			if (record?.outcome !== 'unknown') continue;
			const index = chunk.from + offset;
			result.checked++;
			const encoded = await context.redis.hget(context.keys.recipients(campaign.from, id), String(index));
			const recipient = encoded ? decodeRecipient(encoded) : undefined;
			if (!recipient) {
				result.still_unknown++;
				continue;
			}
			const since = (record.firstAttemptAt ?? 0) - CLOCK_SKEW_MS;
			const answer = await service.conversationByPhone(recipient.phone);
			if (answer.kind === 'ok' && answer.conversation) {
				const outbound = answer.conversation.conversation.messages.find(
					(message) => message.direction === 'outbound' && Date.parse(message.created_at) >= since,
				);
				const proof =
					outbound && (await fromOwnNumber(service, answer.conversation.contact.id, campaign.from, since, outbound));
				if (proof) {
					await context.ledger.resolveUnknown(
						id,
						index,
						'sent',
						proof.id,
						'reconciled: the service lists this message in the conversation',
					);
					result.sent++;
				} else {
					await context.ledger.resolveUnknown(
						id,
						index,
						'not_sent',
						'',
						'reconciled: the conversation has no outbound message since the attempt',
					);
					result.not_sent++;
				}
			} else if (answer.kind === 'refused' && answer.status === 404) {
				await context.ledger.resolveUnknown(
					id,
					index,
					'not_sent',
					'',
					'reconciled: the service has no conversation with this phone',
				);
				result.not_sent++;
			} else if (answer.kind === 'stop') {
				throw new UserError(`reconcile stopped: ${answer.reason}`);
			} else {
				result.still_unknown++;
			}
		}
	}
	// Messages proven sent are tracked like the others: the tracking cursor passed them as unknown.
	if (result.sent > 0) await trackAgain(context, campaign);
	context.log.info({ campaign: id, ...result }, 'campaign reconciled');
	return result;
}
