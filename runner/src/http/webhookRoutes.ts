/** The webhook routes of the control API: thin over its doors in core/. The secret is in the create's answer only. */
import { createWebhookBody, runnerIdParams, webhookAnswer } from 'convo-contract';
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
	disabled_at: z.iso.datetime().optional(),
	disabled_reason: z.string().optional(),
});
const count = z.int().min(0);
const listAnswer = z.object({ webhooks: z.array(listedWebhook), total: count, limit: count, offset: count });

export function webhookRoutes(routes: RouteTable, context: RunnerContext): void {
	routes.add(
		{
			...at('createWebhook'),
			tag: 'webhooks',
			summary:
				'Register a URL for events (campaign.finished, campaign.paused, campaign.delivery_settled, ' +
				'reindex.finished); the answer holds the signing secret, shown this once',
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
				'Registered webhooks, oldest first (no secrets), a page at a time; ' +
				'a disabled one shows disabled_at and disabled_reason',
			query: page,
			success: [
				200,
				'{ webhooks: [{ id, url, events, description, created_at, disabled_at?, ' +
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
