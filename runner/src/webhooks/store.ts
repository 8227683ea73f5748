/**
 * Webhook registrations in Redis: one hash per webhook (url, events, description, created_at) and
 * a sorted set of ids. The secret is not among them: it is derived from the id (secret.ts) and
 * shown once, in the answer to the registration.
 */
import { z } from 'zod/v4';

import { RUNNER_EVENTS, type RunnerEventType } from '../../../nodes/shared';
import { ConfigError } from '../config';
import { NotFoundError, UserError, type RunnerContext } from '../context';
import { newId } from '../keys';
import { checkUrlAllowed } from '../net/outbound';
import { NO_WEBHOOK_KEY, webhookKey, webhookSecret } from './secret';

export const webhookInput = z.object({
	url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
	events: z
		.array(z.enum(RUNNER_EVENTS, { error: `must be one of ${RUNNER_EVENTS.join(', ')}` }))
		.min(1, { error: `must list at least one event (${RUNNER_EVENTS.join(', ')})` }),
	description: z.string().max(500, { error: 'may be at most 500 characters' }).optional(),
});
export type WebhookInput = z.input<typeof webhookInput>;

/** A registration as every answer shows it (never with the secret). */
export interface WebhookView {
	id: string;
	url: string;
	events: RunnerEventType[];
	description: string | null;
	created_at: string;
}

function viewOf(hash: Record<string, string>): WebhookView {
	return { id: hash.id, url: hash.url, events: hash.events.split(',') as RunnerEventType[], description: hash.description || null, created_at: new Date(Number(hash.created_at)).toISOString() };
}

/** Registers a webhook; the answer is the only place its secret ever appears. */
export async function createWebhook(context: RunnerContext, input: WebhookInput): Promise<WebhookView & { secret: string }> {
	const parsed = webhookInput.safeParse(input);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		throw new UserError(`${String(issue.path[0] ?? 'body')} ${issue.message}`);
	}
	const key = webhookKey(context.config);
	if (!key) throw new ConfigError(NO_WEBHOOK_KEY);
	// Deliveries connect only where the network policy allows (net/outbound.ts): refused here first.
	await checkUrlAllowed(context.config, parsed.data.url, 'url');
	const id = newId('w');
	const now = Date.now();
	const events = [...new Set(parsed.data.events)];
	await context.redis
		.multi()
		.hset(context.keys.webhooks.webhook(id), { id, url: parsed.data.url, events: events.join(','), description: parsed.data.description ?? '', created_at: now })
		.zadd(context.keys.webhooks.all, now, id)
		.exec();
	context.log.info({ webhook: id, events }, 'webhook registered');
	return { ...viewOf({ id, url: parsed.data.url, events: events.join(','), description: parsed.data.description ?? '', created_at: String(now) }), secret: webhookSecret(key, id) };
}

export async function findWebhook(context: RunnerContext, id: string): Promise<WebhookView | undefined> {
	const hash = await context.redis.hgetall(context.keys.webhooks.webhook(id));
	return hash.id ? viewOf(hash) : undefined;
}

export async function getWebhook(context: RunnerContext, id: string): Promise<WebhookView> {
	const found = await findWebhook(context, id);
	if (!found) throw new NotFoundError(`No webhook with id ${id}`);
	return found;
}

/** Every registration, oldest first. */
export async function listWebhooks(context: RunnerContext): Promise<WebhookView[]> {
	const ids = await context.redis.zrange(context.keys.webhooks.all, 0, -1);
	const found = await Promise.all(ids.map((id) => findWebhook(context, id)));
	return found.filter((webhook): webhook is WebhookView => webhook !== undefined);
}

/** Removes a registration: its deliveries still queued find it gone and are dropped. */
export async function removeWebhook(context: RunnerContext, id: string): Promise<void> {
	const [[, deleted]] = (await context.redis.multi().del(context.keys.webhooks.webhook(id)).zrem(context.keys.webhooks.all, id).exec()) as Array<[Error | null, number]>;
	if (deleted === 0) throw new NotFoundError(`No webhook with id ${id}`);
	context.log.info({ webhook: id }, 'webhook removed');
}
