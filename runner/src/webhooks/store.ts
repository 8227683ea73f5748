/**
 * Webhook registrations in Redis: one hash per webhook (url, events, description, created_at) and
 * a sorted set of ids. The secret is not among them: it is derived from the id (secret.ts) and
 * shown once, in the answer to the registration.
 *
 * At most RUNNER_MAX_WEBHOOKS registrations, each URL at most RUNNER_MAX_URL_LENGTH characters.
 * The hash also counts failed delivery attempts in a row (`failures`); at RUNNER_WEBHOOK_DISABLE_AFTER
 * the webhook is disabled (`disabled_at`, `disabled_reason`): nothing more is delivered to it until
 * it is enabled again (enableWebhook), which resets the count.
 */
import { z } from 'zod/v4';

import { createWebhookBody, type RunnerEventType } from 'convo-contract';
import { ConfigError } from '../config';
import type { RunnerContext } from '../context';
import { NotFoundError, UserError } from '../errors';
import { newId } from '../keys';
import { LimitError, fullMessage, release, reserve } from '../limits';
import { redisScript } from '../redisScripts';
import { checkUrlAllowed } from '../net/outbound';
import { NO_WEBHOOK_KEY, webhookKey, webhookSecret } from './secret';

/** A registration's input: the contract's body of POST /api/webhooks (the CLI's `webhook add` checks the same). */
const webhookInput = createWebhookBody;
export type WebhookInput = z.input<typeof webhookInput>;

/** A registration as every answer shows it (never with the secret); the disabled fields only while it is disabled. */
export interface WebhookView {
	id: string;
	url: string;
	events: RunnerEventType[];
	description: string | null;
	created_at: string;
	/** Failed delivery attempts in a row (RUNNER_WEBHOOK_DISABLE_AFTER of them disable it). */
	failures: number;
	disabled_at?: string;
	disabled_reason?: string;
}

function viewOf(hash: Record<string, string>): WebhookView {
	const view: WebhookView = {
		id: hash.id,
		url: hash.url,
		events: hash.events.split(',') as RunnerEventType[],
		description: hash.description || null,
		created_at: new Date(Number(hash.created_at)).toISOString(),
		failures: Number(hash.failures ?? 0),
	};
	if (hash.disabled_at)
		Object.assign(view, {
			disabled_at: new Date(Number(hash.disabled_at)).toISOString(),
			disabled_reason: hash.disabled_reason,
		});
	return view;
}

/** Registers a webhook; the answer is the only place its secret ever appears. */
export async function createWebhook(
	context: RunnerContext,
	input: WebhookInput,
): Promise<WebhookView & { secret: string }> {
	const parsed = webhookInput.safeParse(input);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		throw new UserError(`${String(issue.path[0] ?? 'body')} ${issue.message}`);
	}
	const { RUNNER_MAX_URL_LENGTH: maxUrl, RUNNER_MAX_WEBHOOKS: max } = context.config;
	if (parsed.data.url.length > maxUrl)
		throw new LimitError(
			400,
			`url is ${parsed.data.url.length} characters; at most ${maxUrl} are accepted (RUNNER_MAX_URL_LENGTH)`,
			'url',
		);
	const key = webhookKey(context.config);
	if (!key) throw new ConfigError(NO_WEBHOOK_KEY);
	// Deliveries connect only where the network policy allows (net/outbound.ts): refused here first.
	await checkUrlAllowed(context.config, parsed.data.url, 'url');
	const id = newId('w');
	const now = Date.now();
	const events = [...new Set(parsed.data.events)];
	// The place in the list first (counted and taken in one step), then the registration.
	const full = await reserve(context, context.keys.webhooks.all, max, id, now);
	if (full !== undefined) throw new LimitError(409, fullMessage('webhooks', full, max, 'RUNNER_MAX_WEBHOOKS'));
	try {
		await context.redis.hset(context.keys.webhooks.webhook(id), {
			id,
			url: parsed.data.url,
			events: events.join(','),
			description: parsed.data.description ?? '',
			created_at: now,
		});
	} catch (error) {
		await release(context, context.keys.webhooks.all, id).catch(() => undefined);
		throw error;
	}
	context.log.info({ webhook: id, events }, 'webhook registered');
	return {
		...viewOf({
			id,
			url: parsed.data.url,
			events: events.join(','),
			description: parsed.data.description ?? '',
			created_at: String(now),
		}),
		secret: webhookSecret(key, id),
	};
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

/** Every registration, oldest first (the dispatcher's list; at most RUNNER_MAX_WEBHOOKS). */
export async function listWebhooks(context: RunnerContext): Promise<WebhookView[]> {
	return (await pageWebhooks(context, 0, -1)).webhooks;
}

/** A page of the registrations, oldest first, and how many there are: GET /api/webhooks. */
export async function pageWebhooks(
	context: RunnerContext,
	offset: number,
	limit: number,
): Promise<{ webhooks: WebhookView[]; total: number }> {
	const stop = limit < 0 ? -1 : offset + limit - 1;
	const [ids, total] = await Promise.all([
		context.redis.zrange(context.keys.webhooks.all, offset, stop),
		context.redis.zcard(context.keys.webhooks.all),
	]);
	const found = await Promise.all(ids.map((id) => findWebhook(context, id)));
	return { webhooks: found.filter((webhook): webhook is WebhookView => webhook !== undefined), total };
}

/** A failed delivery attempt; true when it disabled the webhook (the caller logs it). */
export async function countFailure(context: RunnerContext, id: string): Promise<boolean> {
	const after = context.config.RUNNER_WEBHOOK_DISABLE_AFTER;
	const run = redisScript(context.redis, 'countWebhookFailure');
	const reason =
		`${after} delivery attempts in a row failed; enable it again with POST /api/webhooks/:id/enable ` +
		'(or convo-runner webhook enable)';
	return Number(await run([context.keys.webhooks.webhook(id)], [after, Date.now(), reason])) === 1;
}

/** A delivered event: the count of failures in a row starts again. */
export async function countSuccess(context: RunnerContext, id: string): Promise<void> {
	const run = redisScript(context.redis, 'webhookSucceeded');
	await run([context.keys.webhooks.webhook(id)], []);
}

/** Enables a disabled webhook: deliveries of later events start again, and its failures count from 0. */
export async function enableWebhook(context: RunnerContext, id: string): Promise<WebhookView> {
	const key = context.keys.webhooks.webhook(id);
	const run = redisScript(context.redis, 'enableWebhook');
	if (Number(await run([key], [])) === 0) throw new NotFoundError(`No webhook with id ${id}`);
	context.log.info({ webhook: id }, 'webhook enabled');
	return getWebhook(context, id);
}

/** Removes a registration and its recent deliveries: its deliveries still queued find it gone and are dropped. */
export async function removeWebhook(context: RunnerContext, id: string): Promise<void> {
	const [[, deleted]] = (await context.redis
		.multi()
		.del(context.keys.webhooks.webhook(id))
		.del(context.keys.webhooks.deliveries(id))
		.zrem(context.keys.webhooks.all, id)
		.exec()) as Array<[Error | null, number]>;
	if (deleted === 0) throw new NotFoundError(`No webhook with id ${id}`);
	context.log.info({ webhook: id }, 'webhook removed');
}
