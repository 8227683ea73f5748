/**
 * The delivery processor of the events queue: one job is one event for one webhook. It looks the
 * webhook up (a removed one gets nothing more), signs the body with the secret derived for it
 * (secret.ts; nodes/shared/runner.ts's signDelivery, the format the trigger verifies) and POSTs it
 * with a 10 s deadline. A 2xx is delivered; anything else throws, and BullMQ tries again with
 * exponential backoff up to RUNNER_WEBHOOK_ATTEMPTS. Every attempt is logged: webhook, event,
 * attempt, status or error; never the secret, the signature or the URL (it may carry a token).
 */
import type { Job } from 'bullmq';
import { request } from 'undici';

import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signDelivery } from '../../../nodes/shared';
import type { RunnerContext } from '../context';
import { outboundFor } from '../net/outbound';
import type { DeliveryJobData } from './outbox';
import { webhookSecret } from './secret';
import { findWebhook } from './store';

export const DELIVERY_TIMEOUT_MS = 10_000;

export function createDeliveryProcessor(context: RunnerContext, key: string) {
	const { log } = context;
	return async function deliver(job: Job<DeliveryJobData>): Promise<string> {
		const { event, webhook: webhookId } = job.data;
		const attempt = job.attemptsMade + 1;
		const fields = { webhook: webhookId, event: event.id, type: event.type, attempt };
		const last = attempt >= (job.opts.attempts ?? 1);
		const failed = last ? `webhook delivery failed for good after ${attempt} attempts` : 'webhook delivery failed; it will be tried again';
		const webhook = await findWebhook(context, webhookId);
		if (!webhook) {
			log.info(fields, 'webhook delivery dropped: the webhook was removed');
			return 'removed';
		}
		const body = JSON.stringify(event);
		let status: number;
		try {
			const response = await request(webhook.url, {
				method: 'POST',
				headers: {
					'content-type': 'application/json',
					'user-agent': 'convo-runner',
					[SIGNATURE_HEADER]: signDelivery(webhookSecret(key, webhookId), body),
					[EVENT_HEADER]: event.type,
					[DELIVERY_HEADER]: String(job.id),
				},
				body,
				headersTimeout: DELIVERY_TIMEOUT_MS,
				bodyTimeout: DELIVERY_TIMEOUT_MS,
				signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
				// Each connection to the receiver is checked against the network policy.
				dispatcher: outboundFor(context.config).agent,
			});
			status = response.statusCode;
			await response.body.dump();
		} catch (error) {
			const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : (error as Error).message;
			log.warn({ ...fields, err: reason }, failed);
			throw new Error(`delivery failed: ${reason}`);
		}
		if (status >= 200 && status < 300) {
			log.info({ ...fields, status }, 'webhook delivered');
			return 'delivered';
		}
		log.warn({ ...fields, status }, failed);
		throw new Error(`delivery answered ${status}`);
	};
}
