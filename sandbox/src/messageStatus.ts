/**
 * Message status over service time (transitions are not shown in SPEC; docs/decisions.md).
 * Every outbound message follows a plan: when it shows `sent`, and then `delivered` and `read`,
 * or `failed` with a reason. Without delivery settings (delivery.ts) the plan is the default
 * timeline: enqueued -> sent (2 s) -> delivered (4 s) -> read (10 s); to an undeliverable contact
 * enqueued -> failed (2 s). Dashboard sends start at sent.
 */
import type { CONVERSATION_MESSAGE_STATUSES } from 'convo-contract';

import type { DeliveryPlan, Message } from './model';

type DeliveryStatus = 'enqueued' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';

export const STATUS_STEPS_MS = { sent: 2000, delivered: 4000, read: 10000, failed: 2000 } as const;

/** B7's `error` for a send to a contact the fixture marks undeliverable. */
const UNDELIVERABLE_REASON = 'The recipient cannot receive messages on this channel';

/** The default timeline of an outbound message (no delivery settings when it was sent). */
function defaultPlan(message: Message): DeliveryPlan {
	// A dashboard send is already sent when it is stored: its timeline starts one step earlier.
	const start = message.createdAtMs - (message.origin === 'dashboard' ? STATUS_STEPS_MS.sent : 0);
	if (message.undeliverable) {
		// Never shown as sent: enqueued until it fails.
		const failedAtMs = start + STATUS_STEPS_MS.failed;
		return { outcome: 'failed', reason: UNDELIVERABLE_REASON, sentAtMs: failedAtMs, failedAtMs };
	}
	return {
		outcome: 'read',
		sentAtMs: start + STATUS_STEPS_MS.sent,
		deliveredAtMs: start + STATUS_STEPS_MS.delivered,
		readAtMs: start + STATUS_STEPS_MS.read,
	};
}

/** The outbound message's plan: drawn from the delivery settings when it was sent, else the default. */
export function planOf(message: Message): DeliveryPlan {
	return message.delivery ?? defaultPlan(message);
}

export function statusAt(message: Message, nowMs: number): DeliveryStatus {
	if (message.direction === 'inbound') return 'received';
	const plan = planOf(message);
	if (plan.failedAtMs !== undefined && nowMs >= plan.failedAtMs) return 'failed';
	if (plan.readAtMs !== undefined && nowMs >= plan.readAtMs) return 'read';
	if (plan.deliveredAtMs !== undefined && nowMs >= plan.deliveredAtMs) return 'delivered';
	return nowMs >= plan.sentAtMs ? 'sent' : 'enqueued';
}

/** B7's `error` of a message: the plan's failure reason once it shows failed. */
export function failureReason(message: Message, nowMs: number): string | null {
	return statusAt(message, nowMs) === 'failed' ? (planOf(message).reason ?? null) : null;
}

/** B7 shows ERROR, DELIVERED, RECEIVED or READ; messages not yet delivered show DELIVERED (not shown). */
export function conversationStatus(status: DeliveryStatus): (typeof CONVERSATION_MESSAGE_STATUSES)[number] {
	if (status === 'received') return 'RECEIVED';
	if (status === 'failed') return 'ERROR';
	if (status === 'read') return 'READ';
	return 'DELIVERED';
}

/** B4 shows sent or received by direction, failed when delivery failed. */
export function contactMessageStatus(status: DeliveryStatus): 'sent' | 'received' | 'failed' {
	if (status === 'received') return 'received';
	return status === 'failed' ? 'failed' : 'sent';
}
