/**
 * Receipts of delivered events, kept by the runner for the receivers: the Convo Runner Trigger
 * asks the runner to record each event id it received before it starts its workflow, and starts
 * it only for the first receipt. The record lives in Redis, so every n8n process (a restart,
 * several webhook processes) sees it: a delivery repeated (the runner's own retry of an answer it
 * did not get, or a replay within the signature's tolerance) starts the workflow once.
 */
import type { RunnerContext } from '../context';
import { getWebhook } from './store';

/** Longer than every repeat can come: the runner's retries end within minutes, a signature is stale after 300 s. */
const RECEIPT_SECONDS = 24 * 3600;


/** Records that webhook `id` received `eventId`; `first` is true for the one call that recorded it. */
export async function recordReceipt(context: RunnerContext, id: string, eventId: string): Promise<{ event_id: string; first: boolean }> {
	await getWebhook(context, id);
	const recorded = await context.redis.set(context.keys.webhooks.receipt(id, eventId), '1', 'EX', RECEIPT_SECONDS, 'NX');
	return { event_id: eventId, first: recorded === 'OK' };
}
