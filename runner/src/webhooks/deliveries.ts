/**
 * What became of a webhook's deliveries, as its operator checks it: each attempt (delivered, failed
 * with the receiver's status or the error, skipped while the webhook is disabled) noted in a list per
 * webhook, the last RECENT_DELIVERIES only, removed with the webhook; and a test event sent on request,
 * through the same queue and signature as every event. No URL, secret or signature is noted.
 */
import { randomBytes } from 'node:crypto';

import { RUNNER_TEST_EVENT, type RunnerEvent } from 'convo-contract';
import type { RunnerContext } from '../context';
import { addTestDelivery, deliveryJobId, type DeliveryJobData } from '../jobs';
import { redisScript } from '../redisScripts';
import { getWebhook } from './store';

/** Attempts a webhook's list keeps: enough to see a receiver's trouble, a bounded store whatever the traffic. */
export const RECENT_DELIVERIES = 20;
/** An error's text is cut here: a receiver's answer or a network error, never needed whole to act on. */
const ERROR_CHARACTERS = 300;

export interface DeliveryAttempt {
	/** The delivery's id (the convo-runner-delivery header), the same on each attempt of one event. */
	id: string;
	event_id: string;
	type: RunnerEvent['type'];
	/** When the attempt ended (ISO 8601). */
	at: string;
	/** 1 for the first; 0 for an event skipped, not attempted, as its webhook is disabled. */
	attempt: number;
	/** Attempts the delivery gets in all: a failed one before the last is tried again. */
	attempts: number;
	outcome: 'delivered' | 'failed' | 'skipped';
	/** The receiver's HTTP status; null when it gave none (no connection, a timeout) or was not asked. */
	status: number | null;
	error: string | null;
	duration_ms: number | null;
}

/** Notes an attempt for its webhook (nothing for one removed meanwhile). */
export async function noteDelivery(context: RunnerContext, webhook: string, attempt: DeliveryAttempt): Promise<void> {
	const note = redisScript(context.redis, 'recordWebhookDelivery');
	const error = attempt.error === null ? null : attempt.error.slice(0, ERROR_CHARACTERS);
	await note(
		[context.keys.webhooks.webhook(webhook), context.keys.webhooks.deliveries(webhook)],
		[JSON.stringify({ ...attempt, error }), RECENT_DELIVERIES],
	);
}

/** Notes an event not delivered to its webhook because the webhook is disabled (attempt 0: none was made). */
export async function noteSkipped(context: RunnerContext, delivery: DeliveryJobData, attempts: number): Promise<void> {
	await noteDelivery(context, delivery.webhook, {
		id: deliveryJobId(delivery),
		event_id: delivery.event.id,
		type: delivery.event.type,
		at: new Date().toISOString(),
		attempt: 0,
		attempts,
		outcome: 'skipped',
		status: null,
		error: 'the webhook is disabled',
		duration_ms: null,
	});
}

/** A webhook's last delivery attempts, newest first; 404 when the webhook is unknown. */
export async function recentDeliveries(context: RunnerContext, id: string): Promise<DeliveryAttempt[]> {
	await getWebhook(context, id);
	const notes = await context.redis.lrange(context.keys.webhooks.deliveries(id), 0, RECENT_DELIVERIES - 1);
	return notes.map((text) => JSON.parse(text) as DeliveryAttempt);
}

/**
 * Queues a test event for one webhook, whatever events it chose and even while it is disabled (a
 * receiver is checked before the webhook is enabled again); a receiver answers it 2xx and does
 * nothing. `queued` is false when a test for it was queued already and not yet tried: that one stands.
 */
export async function sendTestEvent(
	context: RunnerContext,
	id: string,
): Promise<{ id: string; delivery_id: string; queued: boolean }> {
	await getWebhook(context, id);
	const event: RunnerEvent = {
		id: `ev-test-${randomBytes(6).toString('hex')}`,
		type: RUNNER_TEST_EVENT,
		created_at: new Date().toISOString(),
		data: { webhook: id, note: 'a test event sent by an operator: answer 2xx, nothing else is expected' },
	};
	const { deliveryId, queued } = await addTestDelivery(context, { event, webhook: id });
	context.log.info({ webhook: id, event: event.id, queued }, 'webhook test event');
	return { id, delivery_id: deliveryId, queued };
}
