/**
 * The delivery processor of the events queue: one job is one event for one webhook. It looks the
 * webhook up (a removed one gets nothing more), signs the body with the secret derived for it
 * (secret.ts; the contract's signDelivery in runner.ts, the format the trigger verifies) and POSTs it
 * with a 10 s deadline. A 2xx is delivered; anything else throws, and BullMQ tries again with
 * exponential backoff up to RUNNER_WEBHOOK_ATTEMPTS. Every attempt is logged: webhook, event,
 * attempt, status or error; never the secret, the signature or the URL (it may carry a token).
 *
 * Receivers are kept from holding each other up: a webhook has at most IN_FLIGHT_PER_WEBHOOK
 * deliveries in flight across all processes (a Redis sorted set of slots, each lapsing after the
 * deadline should its process die); a job for a webhook at that cap goes back to the queue for
 * BUSY_RETRY_MS without spending an attempt, and the worker's slot goes to another receiver's
 * event. Receivers that hang then hold at most that many of the events worker's slots (its
 * concurrency, jobs.ts) each. Failed attempts in a row are counted on the webhook; at RUNNER_WEBHOOK_DISABLE_AFTER it
 * is disabled (store.ts), which is logged, and its deliveries are skipped until it is enabled again.
 * Each attempt, and each skip, is noted in the webhook's recent deliveries (deliveries.ts). A test
 * event is a probe: delivered to a disabled webhook too, and not counted for or against it.
 */
import { DelayedError, type Job } from 'bullmq';
import { request } from 'undici';

import { DELIVERY_HEADER, EVENT_HEADER, RUNNER_TEST_EVENT, SIGNATURE_HEADER, signDelivery } from 'convo-contract';
import type { RunnerContext } from '../context';
import { redisScript } from '../redisScripts';
import { outboundFor } from '../net/outbound';
import type { DeliveryJobData } from '../jobs';
import { noteDelivery, noteSkipped, type DeliveryAttempt } from './deliveries';
import { webhookSecret } from './secret';
import { countFailure, countSuccess, findWebhook } from './store';

const DELIVERY_TIMEOUT_MS = 10_000;
/** Deliveries to one webhook in flight at once, across every process. */
const IN_FLIGHT_PER_WEBHOOK = 1;
/** How long a job for a webhook at its cap waits before it is tried again. */
const BUSY_RETRY_MS = 1000;

export function createDeliveryProcessor(context: RunnerContext, key: string) {
	const { log } = context;
	const takeSlot = redisScript(context.redis, 'takeWebhookSlot');
	return async function deliver(job: Job<DeliveryJobData>, token?: string): Promise<string> {
		const { event, webhook: webhookId } = job.data;
		const attempt = job.attemptsMade + 1;
		const fields = { webhook: webhookId, event: event.id, type: event.type, attempt };
		const attempts = job.opts.attempts ?? 1;
		const last = attempt >= attempts;
		const test = event.type === RUNNER_TEST_EVENT;
		const failed = last
			? `webhook delivery failed for good after ${attempt} attempts`
			: 'webhook delivery failed; it will be tried again';
		const webhook = await findWebhook(context, webhookId);
		if (!webhook) {
			log.info(fields, 'webhook delivery dropped: the webhook was removed');
			return 'removed';
		}
		if (webhook.disabled_at && !test) {
			log.info(fields, 'webhook delivery skipped: the webhook is disabled');
			await noteSkipped(context, job.data, attempts).catch((error: Error) =>
				log.warn({ ...fields, err: error.message }, 'webhook delivery not noted'),
			);
			return 'disabled';
		}
		const slots = context.keys.webhooks.inflight(webhookId);
		const now = Date.now();
		if (
			Number(
				await takeSlot([slots], [String(job.id), now, now + DELIVERY_TIMEOUT_MS + 5000, IN_FLIGHT_PER_WEBHOOK]),
			) === 0
		) {
			// Busy with other deliveries: back to the queue, no attempt spent, the worker's slot freed.
			await job.moveToDelayed(now + BUSY_RETRY_MS, token);
			throw new DelayedError();
		}
		/** The slot back, and the attempt counted on the webhook (which may disable it). */
		const settle = async (ok: boolean) => {
			await context.redis.zrem(slots, String(job.id));
			if (test) return;
			if (ok) await countSuccess(context, webhookId);
			else if (await countFailure(context, webhookId)) {
				log.warn(
					{ webhook: webhookId, failures: context.config.RUNNER_WEBHOOK_DISABLE_AFTER },
					`webhook disabled: ${context.config.RUNNER_WEBHOOK_DISABLE_AFTER} delivery attempts in a row failed; ` +
						'nothing more is delivered to it until it is enabled again',
				);
			}
		};
		const body = JSON.stringify(event);
		let status: number;
		const sentAt = Date.now();
		/** The attempt in the webhook's recent deliveries; a note that cannot be written is logged, the delivery stands. */
		const note = async (result: Pick<DeliveryAttempt, 'outcome' | 'status' | 'error'>) => {
			const at = Date.now();
			await noteDelivery(context, webhookId, {
				id: String(job.id),
				event_id: event.id,
				type: event.type,
				at: new Date(at).toISOString(),
				attempt,
				attempts,
				...result,
				duration_ms: at - sentAt,
			}).catch((error: Error) => log.warn({ ...fields, err: error.message }, 'webhook delivery not noted'));
		};
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
			const reason =
				(error as Error).name === 'TimeoutError'
					? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`
					: (error as Error).message;
			log.warn({ ...fields, err: reason }, failed);
			await note({ outcome: 'failed', status: null, error: reason });
			await settle(false);
			throw new Error(`delivery failed: ${reason}`);
		}
		if (status >= 200 && status < 300) {
			log.info({ ...fields, status }, 'webhook delivered');
			await note({ outcome: 'delivered', status, error: null });
			await settle(true);
			return 'delivered';
		}
		log.warn({ ...fields, status }, failed);
		await note({ outcome: 'failed', status, error: `the receiver answered ${status}` });
		await settle(false);
		throw new Error(`delivery answered ${status}`);
	};
}
