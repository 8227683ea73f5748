/** The webhook routes of the control API: thin over its doors in core/. The secret is in the create's answer only. */
import { createWebhookBody, RUNNER_TEST_EVENT, runnerIdParams, webhookAnswer } from 'convo-contract';
import { z } from 'zod/v4';

import type { RunnerContext } from '../context';
import * as core from '../core/webhooks';
import { at, type RouteTable } from './routes';

const id = runnerIdParams('webhook');
/** Pages as GET /api/campaigns has them; the default page holds every webhook the default cap allows. */
const page = z.object({
	limit: z.coerce.number().int().min(1).max(500).default(100),
	offset: z.coerce.number().int().min(0).default(0),
});

/** A registration as lists show it: a disabled one with when and why. */
const listedWebhook = webhookAnswer.extend({
	description: z.string().nullable(),
	created_at: z.iso.datetime(),
	failures: z.int().min(0),
	disabled_at: z.iso.datetime().optional(),
	disabled_reason: z.string().optional(),
});
const count = z.int().min(0);
const listAnswer = z.object({ webhooks: z.array(listedWebhook), total: count, limit: count, offset: count });

/** A delivery attempt as the webhook's recent deliveries note it. */
const deliveryAttempt = z.object({
	id: z.string(),
	event_id: z.string(),
	type: z.string(),
	at: z.iso.datetime(),
	attempt: z.int().min(0),
	attempts: z.int().min(1),
	outcome: z.enum(['delivered', 'failed', 'skipped']),
	status: z.int().nullable(),
	error: z.string().nullable(),
	duration_ms: z.int().min(0).nullable(),
});

export function webhookRoutes(routes: RouteTable, context: RunnerContext): void {
	routes.add(
		{
			...at('createWebhook'),
			tag: 'webhooks',
			summary:
				'Register a URL for events (campaign.finished, campaign.paused, campaign.waiting, campaign.delivery_settled, ' +
				'campaign.variant_chosen, reindex.finished); the answer holds the signing secret, shown this once',
			body: createWebhookBody,
			success: [201, '{ id, url, events, description, created_at, secret }'],
		},
		async ({ body }) => core.createWebhook(context, body),
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/webhooks',
			operationId: 'listWebhooks',
			tag: 'webhooks',
			summary:
				'Registered webhooks, oldest first (no secrets), a page at a time, each with its failed attempts in a ' +
				'row; a disabled one shows disabled_at and disabled_reason',
			query: page,
			success: [
				200,
				'{ webhooks: [{ id, url, events, description, created_at, failures, disabled_at?, ' +
					'disabled_reason? }], total, limit, offset }',
			],
			answer: listAnswer,
		},
		async ({ query }) => ({
			...(await core.pageWebhooks(context, query.offset, query.limit)),
			limit: query.limit,
			offset: query.offset,
		}),
	);
	routes.add(
		{
			method: 'POST',
			url: '/api/webhooks/:id/enable',
			operationId: 'enableWebhook',
			tag: 'webhooks',
			summary: 'Enable a webhook disabled after failed deliveries: later events are delivered again; 404 when unknown',
			params: id,
			success: [200, '{ id, url, events, description, created_at }'],
			answer: listedWebhook,
		},
		async ({ params }) => core.enableWebhook(context, params.id),
	);
	routes.add(
		{
			method: 'POST',
			url: '/api/webhooks/:id/test',
			operationId: 'testWebhook',
			tag: 'webhooks',
			summary:
				`Queue a ${RUNNER_TEST_EVENT} event for the webhook (a disabled one too), tried once and not counted ` +
				'as a failure; its attempt shows in the recent deliveries. One test at a time per webhook: ' +
				'queued is false while an earlier one waits. 404 when unknown',
			params: id,
			success: [202, '{ id, delivery_id, queued }'],
			answer: z.object({ id: z.string(), delivery_id: z.string(), queued: z.boolean() }),
		},
		async ({ params }) => core.sendTestEvent(context, params.id),
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/webhooks/:id/deliveries',
			operationId: 'listWebhookDeliveries',
			tag: 'webhooks',
			summary:
				`The webhook's last ${core.RECENT_DELIVERIES} delivery attempts, newest first: event, attempt, outcome ` +
				'(delivered, failed, or skipped while disabled), the status the receiver answered, the error; 404 when unknown',
			params: id,
			success: [
				200,
				'{ deliveries: [{ id, event_id, type, at, attempt, attempts, outcome, status, error, duration_ms }] }',
			],
			answer: z.object({ deliveries: z.array(deliveryAttempt).max(core.RECENT_DELIVERIES) }),
		},
		async ({ params }) => ({ deliveries: await core.recentDeliveries(context, params.id) }),
	);
	routes.add(
		{
			...at('getWebhook'),
			tag: 'webhooks',
			summary: 'One webhook (no secret); 404 when unknown',
			params: id,
			success: [200, '{ id, url, events, description, created_at }'],
		},
		async ({ params }) => core.getWebhook(context, params.id),
	);
	routes.add(
		{
			...at('removeWebhook'),
			tag: 'webhooks',
			summary: 'Remove a webhook: no more deliveries, queued retries included; 404 when unknown',
			params: id,
			success: [204, 'removed'],
		},
		async ({ params, reply }) => {
			await core.removeWebhook(context, params.id);
			return reply.code(204).send();
		},
	);
}
