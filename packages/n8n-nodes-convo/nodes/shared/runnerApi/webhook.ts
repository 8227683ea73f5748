/**
 * Webhooks over the runner's control API (/api/webhooks): a registration for runner events and the
 * receipts a receiver records, with the answers the node reads. The events and their signature:
 * ../runner.ts.
 */
import { z } from 'zod/v4';

import { RUNNER_EVENTS } from '../runner';

/** POST /api/webhooks. */
export const createWebhookBody = z.object({
	url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
	events: z
		.array(z.enum(RUNNER_EVENTS, { error: `must be one of ${RUNNER_EVENTS.join(', ')}` }))
		.min(1, { error: `must list at least one event (${RUNNER_EVENTS.join(', ')})` }),
	description: z.string().max(500, { error: 'may be at most 500 characters' }).optional(),
});

/** POST /api/webhooks/:id/receipts. */
export const recordReceiptBody = z.object({
	event_id: z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/, { error: 'must be the id of a runner event (ev-…)' }),
});

/** A webhook registration; the create's answer alone holds the signing secret. */
export const webhookAnswer = z.looseObject({ id: z.string(), url: z.string(), events: z.array(z.enum(RUNNER_EVENTS)) });
export type WebhookAnswer = z.infer<typeof webhookAnswer>;
export const createWebhookAnswer = webhookAnswer.extend({ secret: z.string() });
export type CreateWebhookAnswer = z.infer<typeof createWebhookAnswer>;

/** POST /api/webhooks/:id/receipts: `first` is true for the one call that recorded the event. */
export const recordReceiptAnswer = z.looseObject({ event_id: z.string(), first: z.boolean() });
export type RecordReceiptAnswer = z.infer<typeof recordReceiptAnswer>;
