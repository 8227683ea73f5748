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
import { luaScript } from '../redis';
import { getWebhook } from './store';

/** Longer than every repeat can come: the runner's retries end within minutes, a signature is stale after 300 s. */
const RECEIPT_MS = 24 * 3_600_000;

/**
 * KEYS: the receipts set. ARGV: the receipt (webhook id:event id), how long one is kept (ms), the
 * cap. Drops receipts past their time; -1 when this one is held, else it is added, the oldest
 * dropped first while the set is full, and the answer is how many were dropped for it.
 */
const RECORD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then redis.call('ZPOPMIN', KEYS[1], over) else over = 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return over
`;

/** One warning per window while the cap drops receipts, not one per receipt. */
const capWarnings = new WeakMap<Logger, ReturnType<typeof throttledWarn>>();

/** Records that webhook `id` received `eventId`; `first` is true for the one call that recorded it. */
export async function recordReceipt(context: RunnerContext, id: string, eventId: string): Promise<{ event_id: string; first: boolean }> {
	await getWebhook(context, id);
	const record = luaScript(context.redis, 'convoRecordReceipt', RECORD, 1);
	const max = context.config.RUNNER_MAX_RECEIPTS;
	const dropped = Number(await record([context.keys.webhooks.receipts], [`${id}:${eventId}`, RECEIPT_MS, max]));
	if (dropped > 0) {
		let warn = capWarnings.get(context.log);
		if (!warn) capWarnings.set(context.log, (warn = throttledWarn(context.log)));
		warn('receipts', { max }, 'webhook receipts at their cap (RUNNER_MAX_RECEIPTS): the oldest are dropped for new ones');
	}
	return { event_id: eventId, first: dropped >= 0 };
}
