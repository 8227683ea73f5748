/** The receipt route of the control API (webhooks/receipts.ts): a receiver records an event it got, once. */
import { z } from 'zod/v4';

import type { RunnerContext } from '../context';
import { receiptInput, recordReceipt } from '../webhooks/receipts';
import type { RouteTable } from './routes';

const id = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be a webhook id' }) });

export function receiptRoutes(routes: RouteTable, context: RunnerContext): void {
	routes.add(
		{
			method: 'POST',
			url: '/api/webhooks/:id/receipts',
			tag: 'webhooks',
			summary: 'Record that this webhook received an event: first is true for the one call that recorded it (kept 24 h), so a repeated delivery is acted on once by every receiver process',
			params: id,
			body: receiptInput,
			success: [200, '{ event_id, first }'],
		},
		async ({ params, body }) => recordReceipt(context, params.id, body.event_id),
	);
}
