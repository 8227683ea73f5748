/**
 * The contract between the runner's control API and the node pack (the Convo node's Campaign and
 * Reindex Run resources, the Convo Runner Trigger): the event names and the signature of event
 * deliveries. The runner signs with these functions and the trigger verifies with them, so the
 * format is written once. Routes and bounds: runnerRoutes.ts; requests and answers: runnerApi/.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Events the runner delivers to registered webhooks. */
export const RUNNER_EVENTS = [
	'campaign.finished',
	'campaign.paused',
	'campaign.waiting',
	'campaign.delivery_settled',
	'campaign.variant_chosen',
	'reindex.finished',
] as const;
export type RunnerEventType = (typeof RUNNER_EVENTS)[number];

/**
 * The event an operator sends to check a webhook's receiver (POST /api/webhooks/:id/test): sent to
 * any webhook, whatever events it chose, and never subscribed to; a receiver answers 2xx and does nothing.
 */
export const RUNNER_TEST_EVENT = 'webhook.test';

/** The body of every delivery: `data` is the campaign's status, the reindex run's status, or a test's note. */
export interface RunnerEvent {
	/** Unique per event (not per delivery attempt): a receiver that sees it twice can drop the copy. */
	id: string;
	type: RunnerEventType | typeof RUNNER_TEST_EVENT;
	/** ISO 8601, when the event happened. */
	created_at: string;
	data: Record<string, unknown>;
}

/** Headers of a delivery. */
export const SIGNATURE_HEADER = 'convo-runner-signature';
export const EVENT_HEADER = 'convo-runner-event';
export const DELIVERY_HEADER = 'convo-runner-delivery';

/** A delivery older (or newer) than this is refused: a captured request cannot be replayed later. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

function hmacHex(secret: string, timestamp: number, body: string): string {
	return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** The signature header's value: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function signDelivery(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): string {
	return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * Checks a delivery's signature header against the raw body, in constant time. The reason says
 * what is wrong without echoing the secret or the expected value.
 */
export function verifyDelivery(
	header: string | string[] | undefined,
	body: string,
	secret: string,
	now = Math.floor(Date.now() / 1000),
	toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): SignatureCheck {
	if (typeof header !== 'string' || header === '')
		return { ok: false, reason: `the ${SIGNATURE_HEADER} header is missing` };
	const parts = new Map<string, string[]>();
	for (const part of header.split(',')) {
		const at = part.indexOf('=');
		if (at <= 0) continue;
		const key = part.slice(0, at).trim();
		parts.set(key, [...(parts.get(key) ?? []), part.slice(at + 1).trim()]);
	}
	const timestamp = Number(parts.get('t')?.[0]);
	const signatures = parts.get('v1') ?? [];
	if (!Number.isInteger(timestamp) || signatures.length === 0) {
		return { ok: false, reason: `the ${SIGNATURE_HEADER} header is not of the form t=<seconds>,v1=<hex>` };
	}
	if (Math.abs(now - timestamp) > toleranceSeconds) {
		return { ok: false, reason: `the signature's timestamp is more than ${toleranceSeconds} seconds away from now` };
	}
	const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex');
	// Several v1 values are allowed (a key being rotated); each is compared in constant time.
	const matches = signatures.some((signature) => {
		const wellFormed = /^[0-9a-f]{64}$/i.test(signature);
		const given = wellFormed ? Buffer.from(signature, 'hex') : Buffer.alloc(expected.length);
		return timingSafeEqual(given, expected) && wellFormed;
	});
	return matches ? { ok: true, timestamp } : { ok: false, reason: 'the signature does not match the body' };
}
