/** The webhook routes of the control API: thin over core.ts. The secret is in the create's answer only. */
import { z } from 'zod/v4';

import type { RunnerContext } from '../context';
import * as core from '../core';
import { webhookInput } from '../webhooks/store';
import type { RouteTable } from './routes';

const id = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be a webhook id' }) });

export function webhookRoutes(routes: RouteTable, context: RunnerContext): void {
	routes.add(
		{
			method: 'POST',
			url: '/api/webhooks',
			tag: 'webhooks',
			summary: 'Register a URL for events (campaign.finished, campaign.paused, reindex.finished); the answer holds the signing secret, shown this once',
			body: webhookInput,
			success: [201, '{ id, url, events, description, created_at, secret }'],
		},
		async ({ body }) => core.createWebhook(context, body),
	);
	routes.add({ method: 'GET', url: '/api/webhooks', tag: 'webhooks', summary: 'Registered webhooks, oldest first (no secrets)', success: [200, '{ webhooks: [{ id, url, events, description, created_at }] }'] }, async () => ({
		webhooks: await core.listWebhooks(context),
	}));
	routes.add({ method: 'GET', url: '/api/webhooks/:id', tag: 'webhooks', summary: 'One webhook (no secret); 404 when unknown', params: id, success: [200, '{ id, url, events, description, created_at }'] }, async ({ params }) =>
		core.getWebhook(context, params.id),
	);
	routes.add({ method: 'DELETE', url: '/api/webhooks/:id', tag: 'webhooks', summary: 'Remove a webhook: no more deliveries, queued retries included; 404 when unknown', params: id, success: [204, 'removed'] }, async ({ params, reply }) => {
		await core.removeWebhook(context, params.id);
		return reply.code(204).send();
	});
}
