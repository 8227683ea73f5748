/**
 * Receipts of delivered events, kept by the runner for the receivers: the Convo Runner Trigger
 * asks the runner to record each event id it received before it starts its workflow, and starts
 * it only for the first receipt. The record lives in Redis, so every n8n process (a restart,
 * several webhook processes) sees it: a delivery repeated (the runner's own retry of an answer it
 * did not get, or a replay within the signature's tolerance) starts the workflow once.
 *
 * Every receipt is a member of one sorted set (`webhook id:event id` by the time it was recorded),
 * so their total is capped (RUNNER_MAX_RECEIPTS) in the same script that records one: Redis runs
 * noeviction, and receipts recorded faster than they age out must not fill it. At the cap the
 * oldest receipt is dropped for the new one, so recording never fails; a repeat of a dropped event
 * would start its workflow again, which needs more receipts within a day than the cap, while
 * repeats come within minutes.
 */
import type { RunnerContext } from '../context';
import { throttledWarn, type Logger } from '../log';
import { redisScript } from '../redisScripts';
import { getWebhook } from './store';

/** Longer than every repeat can come: the runner's retries end within minutes, a signature is stale after 300 s. */
const RECEIPT_MS = 24 * 3_600_000;

/** One warning per period (throttledWarn's) while the cap drops receipts, not one per receipt. */
const capWarnings = new WeakMap<Logger, ReturnType<typeof throttledWarn>>();

/** Records that webhook `id` received `eventId`; `first` is true for the one call that recorded it. */
export async function recordReceipt(
	context: RunnerContext,
	id: string,
	eventId: string,
): Promise<{ event_id: string; first: boolean }> {
	await getWebhook(context, id);
	const record = redisScript(context.redis, 'recordReceipt');
	const max = context.config.RUNNER_MAX_RECEIPTS;
	const dropped = Number(await record([context.keys.webhooks.receipts], [`${id}:${eventId}`, RECEIPT_MS, max]));
	if (dropped > 0) {
		let warn = capWarnings.get(context.log);
		if (!warn) capWarnings.set(context.log, (warn = throttledWarn(context.log)));
		warn(
			'receipts',
			{ max },
			'webhook receipts at their cap (RUNNER_MAX_RECEIPTS): the oldest are dropped for new ones',
		);
	}
	return { event_id: eventId, first: dropped >= 0 };
}
