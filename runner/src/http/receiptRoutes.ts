/** The receipt route of the control API (webhooks/receipts.ts): a receiver records an event it got, once. */
import { recordReceiptBody, runnerIdParams } from 'convo-contract';

import type { RunnerContext } from '../context';
import { recordReceipt } from '../core/webhooks';
import { at, type RouteTable } from './routes';

const id = runnerIdParams('webhook');

export function receiptRoutes(routes: RouteTable, context: RunnerContext): void {
	routes.add(
		{
			...at('recordReceipt'),
			tag: 'webhooks',
			summary:
				'Record that this webhook received an event: first is true for the one call that recorded it (kept 24 h, ' +
				'at most RUNNER_MAX_RECEIPTS in all: past it the oldest are dropped), ' +
				'so a repeated delivery is acted on once by every receiver process',
			params: id,
			body: recordReceiptBody,
			success: [200, '{ event_id, first }'],
		},
		async ({ params, body }) => recordReceipt(context, params.id, body.event_id),
	);
}
