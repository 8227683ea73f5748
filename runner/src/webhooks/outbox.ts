/**
 * The dispatcher: moves events from the outbox (events.ts) into the delivery queue, one job per
 * event and subscribed webhook. It runs on every feeder tick, in one process at a time (a lock).
 * The job id is the event id and the webhook id together, so an event handed over twice (a
 * process killed between adding the jobs and trimming the outbox) is still one delivery per
 * webhook. Jobs carry the event and the webhook id, never a secret or a URL.
 */
import { randomBytes } from 'node:crypto';

import type { RunnerEvent, RunnerEventType } from 'convo-contract';
import type { RunnerContext } from '../context';
import { eventJobOptions } from '../queues';
import { campaignDetail, recordFromHash, statusWithRate } from '../campaigns/store';
import { overviewOf, runFromHash, statusOf as runStatusOf } from '../reindex/store';
import { hashOf, type OutboxEntry } from './events';
import { listWebhooks } from './store';

const BATCH = 100;
const RELEASE_LOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export interface DeliveryJobData {
	event: RunnerEvent;
	webhook: string;
}

const deliveryJobId = (eventId: string, webhookId: string) => `${eventId}-${webhookId}`;

/** The event as receivers get it: a campaign's status and settings, or a reindex run's status, as they were at the transition. */
function eventOf(entry: OutboxEntry): RunnerEvent {
	const hash = hashOf(entry.hash);
	const type = entry.type as RunnerEventType;
	let data: Record<string, unknown>;
	if (type === 'reindex.finished') {
		data = { ...runStatusOf(overviewOf(runFromHash(hash), 0)) };
	} else {
		const campaign = recordFromHash(hash);
		data = campaignDetail(campaign, statusWithRate(campaign, 0));
	}
	return { id: entry.id, type, created_at: new Date(Number(entry.at)).toISOString(), data };
}

/** Hands every event in the outbox to the delivery queue; returns how many events it moved. */
export async function dispatchEvents(context: RunnerContext): Promise<number> {
	const { redis, keys } = context;
	const token = randomBytes(8).toString('hex');
	if ((await redis.set(keys.webhooks.outboxLock, token, 'PX', 30_000, 'NX')) !== 'OK') return 0;
	let moved = 0;
	try {
		for (;;) {
			const entries = await redis.lrange(keys.webhooks.outbox, 0, BATCH - 1);
			if (entries.length === 0) break;
			const webhooks = await listWebhooks(context);
			const jobs = entries.flatMap((text) => {
				const event = eventOf(JSON.parse(text) as OutboxEntry);
				return webhooks
					.filter((webhook) => webhook.events.includes(event.type) && !webhook.disabled_at)
					.map((webhook) => ({ name: event.type, data: { event, webhook: webhook.id } satisfies DeliveryJobData, opts: { ...eventJobOptions(context.config), jobId: deliveryJobId(event.id, webhook.id) } }));
			});
			if (jobs.length > 0) await context.queues.events.addBulk(jobs);
			// Events listed while these were handled were appended after them: only the handled ones go.
			await redis.ltrim(keys.webhooks.outbox, entries.length, -1);
			moved += entries.length;
			if (jobs.length > 0) context.log.debug({ events: entries.length, deliveries: jobs.length }, 'events queued for delivery');
		}
	} finally {
		await redis.eval(RELEASE_LOCK, 1, keys.webhooks.outboxLock, token);
	}
	return moved;
}
