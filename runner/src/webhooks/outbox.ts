/**
 * The dispatcher: moves events from the outboxes (events.ts) into the delivery queue, one job per
 * event and subscribed webhook. There is an outbox per sending number and per collection (each in
 * its group, keys.ts, so a transition writes its event in its own script); the dispatcher walks
 * them all on every feeder tick, in one process at a time (a lock).
 * The job id is the event id and the webhook id together, so an event handed over twice (a
 * process killed between adding the jobs and trimming the outbox) is still one delivery per
 * webhook. Jobs carry the event and the webhook id, never a secret or a URL.
 */
import { randomBytes } from 'node:crypto';

import type { RunnerEvent, RunnerEventType } from 'convo-contract';
import type { RunnerContext } from '../context';
import { addDeliveryJobs, type DeliveryJobData } from '../jobs';
import { campaignDetail, campaignFunnel, recordFromHash, statusWithRate } from '../campaigns/store';
import { overviewOf, runFromHash, statusOf as runStatusOf } from '../reindex/store';
import { hashOf, type OutboxEntry } from './events';
import { noteSkipped } from './deliveries';
import { listWebhooks } from './store';
import { releaseLock, takeLock } from '../lock';

const BATCH = 100;

/**
 * The event as receivers get it: a campaign's status, funnel and settings, or a reindex run's
 * status, as they were at the transition (the replies counted when it is handed over).
 */
async function eventOf(context: RunnerContext, entry: OutboxEntry): Promise<RunnerEvent & { type: RunnerEventType }> {
	const hash = hashOf(entry.hash);
	const type = entry.type as RunnerEventType;
	let data: Record<string, unknown>;
	if (type === 'reindex.finished') {
		data = { ...runStatusOf(overviewOf(runFromHash(hash), 0)) };
	} else {
		const campaign = recordFromHash(hash);
		data = campaignDetail(campaign, {
			...statusWithRate(campaign, 0),
			funnel: await campaignFunnel(context, campaign),
		});
	}
	return { id: entry.id, type, created_at: new Date(Number(entry.at)).toISOString(), data };
}

/** Every outbox: one per sending number, one per collection. */
export async function outboxes(context: RunnerContext): Promise<string[]> {
	const { redis, keys } = context;
	const [numbers, collections] = await Promise.all([
		redis.smembers(keys.numbers),
		redis.smembers(keys.reindex.collections),
	]);
	return [
		...numbers.map((from) => keys.outbox(from)),
		...collections.map((collection) => keys.reindex.outbox(collection)),
	];
}

/** Hands every event in the outboxes to the delivery queue; returns how many events it moved. */
export async function dispatchEvents(context: RunnerContext): Promise<number> {
	const { redis, keys } = context;
	const token = randomBytes(8).toString('hex');
	if ((await takeLock(redis, keys.webhooks.outboxLock, token, 30_000)) !== undefined) return 0;
	let moved = 0;
	try {
		for (const outbox of await outboxes(context)) moved += await dispatchOutbox(context, outbox);
	} finally {
		await releaseLock(redis, keys.webhooks.outboxLock, token);
	}
	return moved;
}

async function dispatchOutbox(context: RunnerContext, outbox: string): Promise<number> {
	const { redis } = context;
	let moved = 0;
	for (;;) {
		const entries = await redis.lrange(outbox, 0, BATCH - 1);
		if (entries.length === 0) break;
		const webhooks = await listWebhooks(context);
		const events = await Promise.all(entries.map((text) => eventOf(context, JSON.parse(text) as OutboxEntry)));
		const subscribed = events.flatMap((event) =>
			webhooks
				.filter((webhook) => webhook.events.includes(event.type))
				.map((webhook): DeliveryJobData & { disabled: boolean } => ({
					event,
					webhook: webhook.id,
					disabled: webhook.disabled_at !== undefined,
				})),
		);
		const deliveries = subscribed.filter((pair) => !pair.disabled).map(({ event, webhook }) => ({ event, webhook }));
		await addDeliveryJobs(context, deliveries);
		// A disabled webhook's recent deliveries show what it missed.
		for (const { event, webhook } of subscribed.filter((pair) => pair.disabled))
			await noteSkipped(context, { event, webhook }, context.config.RUNNER_WEBHOOK_ATTEMPTS);
		// Events listed while these were handled were appended after them: only the handled ones go.
		await redis.ltrim(outbox, entries.length, -1);
		moved += entries.length;
		if (deliveries.length > 0)
			context.log.debug({ events: entries.length, deliveries: deliveries.length }, 'events queued for delivery');
	}
	return moved;
}
