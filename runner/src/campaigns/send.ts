/**
 * The send processor (of the send queues' `send` jobs, jobs.ts): one job is one recipient of one campaign. Claim in the ledger, send B8 once,
 * settle. What each answer of the service means is decided by service.ts's one table; what this
 * does with it:
 *
 *   ok       -> sent (message id)             refused -> failed (the service's message)
 *   unknown  -> unknown (reconcile decides)   stop    -> the whole campaign fails with the reason
 *   hold     -> back to pending, the number's queue waits Retry-After (BullMQ rate limit), no attempt used
 *   retry    -> back to pending, BullMQ retries with backoff; the last attempt settles failed
 */
import { randomBytes } from 'node:crypto';

import { RateLimitError, type Job } from 'bullmq';

import type { RunnerContext } from '../context';
import type { SendJobData } from '../jobs';
import type { ConvoService } from '../service';
import { failCampaign } from './control';
import { dropQueuedSends } from './feeder';
import { decodeRecipient } from './schema';
import { campaignNumber } from '../homes';
import { holdStarts, waitForStart } from './spacing';

/** A stopped campaign's jobs fed after a drop (a feeder tick that raced the stop) are dropped by the next pass. */
const DROP_AGAIN_AFTER_MS = 5000;

/** The immutable part of a campaign, read once per process: its number and its B8 request but the body. */
interface SendSettings {
	from: string;
	send: ReturnType<ConvoService['templateSender']>;
}

/** Sends this process has claimed and not settled: what SIGTERM waits for. */
export interface InFlight {
	campaign: string;
	index: number;
	token: string;
}

export function createSendProcessor(context: RunnerContext, inFlight: Map<string, InFlight>, shutdown: AbortSignal) {
	const { redis, keys, ledger, queues, config, log } = context;
	const service = context.service;
	if (!service) throw new Error('the send processor needs the service client');
	const settingsCache = new Map<string, SendSettings>();
	const processTag = randomBytes(4).toString('hex');

	const settingsOf = async (id: string): Promise<SendSettings | undefined> => {
		const cached = settingsCache.get(id);
		if (cached) return cached;
		const from = await campaignNumber(context, id);
		if (from === undefined) return undefined;
		const [templateId, agentId] = await redis.hmget(keys.campaign(from, id), 'template_id', 'agent_id');
		if (!templateId) return undefined;
		const settings = { from, send: service.templateSender({ template_id: templateId, from_phone_number: from, agent_id: agentId || undefined }) };
		settingsCache.set(id, settings);
		return settings;
	};

	/** When this process last took a stopped campaign's jobs out of the queue (one pass serves the many that follow). */
	const droppedAt = new Map<string, number>();
	const dropStoppedCampaign = async (from: string, campaign: string) => {
		const now = Date.now();
		if (now - (droppedAt.get(campaign) ?? 0) < DROP_AGAIN_AFTER_MS) return;
		for (const [id, at] of droppedAt) if (now - at >= DROP_AGAIN_AFTER_MS) droppedAt.delete(id);
		droppedAt.set(campaign, now);
		const dropped = await dropQueuedSends(context, from, campaign);
		if (dropped > 0) log.info({ campaign, dropped }, 'campaign not running: its queued sends were taken out of the queue');
	};

	return async function processSend(job: Job<SendJobData>): Promise<string> {
		const { campaign, index } = job.data;
		const settings = await settingsOf(campaign);
		if (!settings) return 'no such campaign';
		const token = `${job.id}.${job.attemptsStarted}.${processTag}`;
		// Wait for this send's start before claiming: a process stopped meanwhile has claimed nothing.
		const start = await waitForStart(context, { from: settings.from, campaign }, token, shutdown);
		if (start === 'stopped') throw new RateLimitError();
		// A campaign not running (paused, ended) took no start: the claim leaves its recipient as it is.
		const claim = await ledger.claim(campaign, index, token, start !== 'not running');
		if (start === 'not running') await dropStoppedCampaign(settings.from, campaign);
		if (claim.outcome !== 'claimed') return claim.outcome;

		const key = `${campaign}/${index}`;
		inFlight.set(key, { campaign, index, token });
		/** Settles this claim; logs the campaign's state change when this settle made it. */
		const settle = async (to: Parameters<typeof ledger.settle>[3], ref: string, error: string, counter: Parameters<typeof ledger.settle>[7] = '') => {
			const result = await ledger.settle(campaign, index, token, to, ref, error, config.RUNNER_PAUSE_AFTER_FAILURES, counter);
			if (result === 'completed') log.info({ campaign }, 'campaign completed');
			if (result === 'paused') log.warn({ campaign, reason: error }, `campaign paused itself after ${config.RUNNER_PAUSE_AFTER_FAILURES} failed recipients in a row`);
			return result;
		};
		try {
			if (!claim.row) {
				await settle('failed', '', 'the recipient is missing from the snapshot');
				return 'failed';
			}
			const recipient = decodeRecipient(claim.row);
			const outcome = await settings.send({ ...recipient.variables, phone: recipient.phone, ...(recipient.buttons ? { buttons: recipient.buttons } : {}) }, shutdown);
			switch (outcome.kind) {
				case 'ok':
					await settle('sent', outcome.messageId ?? '', '');
					return 'sent';
				case 'refused':
					await settle('failed', '', outcome.reason);
					return 'failed';
				case 'unknown':
					await settle('unknown', '', outcome.reason);
					log.warn({ campaign, reason: outcome.reason }, 'send outcome unknown; `campaign reconcile` resolves it');
					return 'unknown';
				case 'stop':
					await settle('not_sent', '', outcome.reason);
					await failCampaign(context, campaign, outcome.reason);
					return 'stopped';
				case 'hold':
					await settle('pending', '', outcome.reason, 'holds');
					await queues.send(settings.from).rateLimit(outcome.waitMs);
					await holdStarts(context, settings.from, outcome.waitMs);
					throw new RateLimitError();
				case 'retry': {
					const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
					if (last) {
						await settle('failed', '', `${outcome.reason} (after ${job.attemptsMade + 1} attempts)`);
						return 'failed';
					}
					await settle('pending', '', outcome.reason, 'retries');
					throw new Error(`not sent, will retry: ${outcome.reason}`);
				}
			}
		} finally {
			inFlight.delete(key);
		}
	};
}
