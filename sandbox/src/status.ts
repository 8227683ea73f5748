/**
 * Message status over service time (transitions are not shown in SPEC; docs/decisions.md):
 * outbound messages go enqueued -> sent (2 s) -> delivered (4 s) -> read (10 s); to an
 * undeliverable contact they go enqueued -> failed (2 s). Dashboard sends start at sent.
 */
import type { CONVERSATION_MESSAGE_STATUSES } from 'convo-contract';

import type { Message } from './model';

type DeliveryStatus = 'enqueued' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';

const STATUS_STEPS_MS = { sent: 2000, delivered: 4000, read: 10000, failed: 2000 } as const;

export function statusAt(message: Message, nowMs: number): DeliveryStatus {
	if (message.direction === 'inbound') return 'received';
	const elapsed = nowMs - message.createdAtMs + (message.origin === 'dashboard' ? STATUS_STEPS_MS.sent : 0);
	if (message.undeliverable) return elapsed < STATUS_STEPS_MS.failed ? 'enqueued' : 'failed';
	if (elapsed < STATUS_STEPS_MS.sent) return 'enqueued';
	if (elapsed < STATUS_STEPS_MS.delivered) return 'sent';
	if (elapsed < STATUS_STEPS_MS.read) return 'delivered';
	return 'read';
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
