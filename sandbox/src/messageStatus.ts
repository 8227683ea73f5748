/**
 * Message status over service time (transitions are not shown in SPEC;
 * docs/decisions/sandbox/message-statuses.md).
 * Every outbound message follows a plan: when it shows `sent`, and then `delivered` and `read`,
 * or `failed` with a reason. Without delivery settings (delivery.ts) the plan is the default
 * timeline: enqueued -> sent (2 s) -> delivered (4 s) -> read (10 s); to an undeliverable contact
 * enqueued -> failed (2 s). Dashboard sends start at sent. A sandbox started with a timeline of
 * its own (`--timeline`) uses that one instead, so tests of delivery tracking need not wait 10 s.
 */
import type { CONVERSATION_MESSAGE_STATUSES } from 'convo-contract';

import type { DeliveryPlan, Message, Timeline } from './model';

type DeliveryStatus = 'enqueued' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';

export const DEFAULT_TIMELINE: Readonly<Timeline> = { sent: 2000, delivered: 4000, read: 10000, failed: 2000 };

/** Seven days: longer than any client keeps checking a message's delivery. */
export const MAX_STEP_MS = 7 * 24 * 3600 * 1000;

/** Each step and the one it follows: a step never comes before it. */
const STEP_ORDER = [
	['delivered', 'sent'],
	['read', 'delivered'],
	['failed', 'sent'],
] as const;

/**
 * A timeline from the steps given, the others the default's; throws naming the step that is not a
 * whole number of ms up to seven days or comes before the step it follows.
 */
export function timelineOf(steps: Partial<Timeline>): Timeline {
	const timeline = { ...DEFAULT_TIMELINE, ...steps };
	for (const [name, ms] of Object.entries(timeline)) {
		if (!Number.isInteger(ms) || ms < 0 || ms > MAX_STEP_MS)
			throw new Error(`${name} must be a whole number of milliseconds from 0 to ${MAX_STEP_MS}, not ${ms}`);
	}
	for (const [later, earlier] of STEP_ORDER) {
		if (timeline[later] < timeline[earlier])
			throw new Error(
				`${later} (${timeline[later]}) must be at least ${earlier} (${timeline[earlier]}): ` +
					'a step cannot come before the one it follows',
			);
	}
	return timeline;
}

/** `sent=200,delivered=400,read=1000,failed=200` (ms; steps left out keep the default's) as a timeline. */
export function parseTimeline(text: string): Timeline {
	const steps: Partial<Timeline> = {};
	for (const part of text.split(',')) {
		const match = /^\s*(sent|delivered|read|failed)\s*=\s*(\d+)\s*$/.exec(part);
		if (!match)
			throw new Error(
				`"${part}" is not <step>=<ms>; steps: sent, delivered, read, failed ` +
					'(e.g. sent=200,delivered=400,read=1000,failed=200)',
			);
		steps[match[1] as keyof Timeline] = Number(match[2]);
	}
	return timelineOf(steps);
}

/** B7's `error` for a send to a contact the fixture marks undeliverable. */
const UNDELIVERABLE_REASON = 'The recipient cannot receive messages on this channel';

/** The default timeline of an outbound message (no delivery settings when it was sent): its sandbox's. */
function defaultPlan(message: Message): DeliveryPlan {
	const steps = message.timeline;
	// A dashboard send is already sent when it is stored: its timeline starts one step earlier.
	const start = message.createdAtMs - (message.origin === 'dashboard' ? steps.sent : 0);
	if (message.undeliverable) {
		// Never shown as sent: enqueued until it fails.
		const failedAtMs = start + steps.failed;
		return { outcome: 'failed', reason: UNDELIVERABLE_REASON, sentAtMs: failedAtMs, failedAtMs };
	}
	return {
		outcome: 'read',
		sentAtMs: start + steps.sent,
		deliveredAtMs: start + steps.delivered,
		readAtMs: start + steps.read,
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
