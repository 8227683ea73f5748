/**
 * The send processor (of the send queues' `send` jobs, jobs.ts): one job is up to SEND_JOB_SIZE
 * recipients of one campaign, sent one after another. Per recipient: take its start and claim it in
 * the ledger (one step, spacing.ts), send B8 once, settle. What each answer of the service means is decided by
 * service.ts's one table; what this does with it:
 *
 *   ok       -> sent (message id)             refused -> failed (the service's message)
 *   unknown  -> unknown (reconcile decides)   stop    -> the whole campaign fails with the reason
 *   blocked  -> back to pending, no attempt used; the campaigns that use the refused template,
 *               number or key pause (refusals.ts); the job goes on with its next recipient
 *   limited  -> back to pending; the number waits RUNNER_MESSAGING_LIMIT_HOLD, as for a hold
 *   hold     -> back to pending, the number's queue waits Retry-After (BullMQ rate limit), no attempt
 *               used; the job goes back to the queue and goes on from this recipient
 *   retry    -> back to pending, the job waits the recipient's backoff (delayed) and goes on from
 *               it; its last try (RUNNER_SEND_ATTEMPTS) settles failed
 *
 * Before the send, the recipient is counted in the business's daily messaging budget
 * (audience/budget.ts). With the limit reached it goes back to pending (no attempt used), the
 * campaign notes the wait, and the job waits in the delayed set until the next customer can be
 * counted (looking again at least every RUNNER_DAILY_LIMIT_RECHECK), then goes on from it.
 */
import { randomBytes } from 'node:crypto';

import { DelayedError, RateLimitError, type Job } from 'bullmq';

import type { RunnerContext } from '../context';
import { sendRetryDelay, type SendJobData } from '../jobs';
import type { ConvoService } from '../service';
import { failCampaign } from '../campaigns/control';
import { noteTemplateName } from '../campaigns/store';
import { dropQueuedSends } from './feeder';
import { decodeRecipient, templateBody } from '../campaigns/schema';
import { campaignNumber } from '../keyGroups';
import { countCampaignCustomer, noteBudgetWait } from '../audience/budget';
import { holdStarts, startNextInJob, takeStartAgain, type ClaimedStart, type Place } from './spacing';
import { freshStartMs, roomOf } from './startGateMath';
import { settleBlocked } from './refusals';

/** A stopped campaign's jobs fed after a drop (a feeder tick that raced the stop) are dropped by the next pass. */
const DROP_AGAIN_AFTER_MS = 5000;

/** A recipient's error while it waits for the daily messaging limit. */
const DAILY_LIMIT_WAIT = 'waiting for the daily messaging limit';

/** The immutable part of a campaign, read once per process: its number and its B8 requests but the body. */
interface SendSettings {
	from: string;
	/** The campaign's template (an A/B test's first variant). */
	templateId: string;
	/** A template's B8 sender, one per template the campaign sends (an A/B test's variants). */
	senderOf(templateId: string): ReturnType<ConvoService['templateSender']>;
	/** An A/B test's variants' templates, in order; absent for a campaign of one template. */
	variants?: string[];
	/** The A/B test's winner's template, once read (it never changes once chosen). */
	winner?: string;
	/** The template's name is kept on the campaign (once per process: the first answer that names it). */
	templateNamed: boolean;
}

/** Sends this process has claimed and not settled: what SIGTERM waits for. */
export interface InFlight {
	campaign: string;
	index: number;
	token: string;
}

export function createSendProcessor(
	context: RunnerContext,
	inFlight: Map<string, InFlight>,
	shutdown: AbortSignal,
	draining: AbortSignal,
) {
	const { redis, keys, ledger, queues, config, log } = context;
	const service = context.service;
	if (!service) throw new Error('the send processor needs the service client');
	const settingsCache = new Map<string, SendSettings>();
	const processTag = randomBytes(4).toString('hex');
	const room = roomOf(config);
	const freshMs = freshStartMs(room);

	const settingsOf = async (id: string): Promise<SendSettings | undefined> => {
		const cached = settingsCache.get(id);
		if (cached) return cached;
		const from = await campaignNumber(context, id);
		if (from === undefined) return undefined;
		const [templateId, agentId, variants] = await redis.hmget(
			keys.campaign(from, id),
			'template_id',
			'agent_id',
			'ab_variants',
		);
		if (!templateId) return undefined;
		const senders = new Map<string, ReturnType<ConvoService['templateSender']>>();
		const settings: SendSettings = {
			from,
			templateId,
			templateNamed: false,
			senderOf: (template) => {
				let sender = senders.get(template);
				if (!sender) {
					sender = service.templateSender({
						template_id: template,
						from_phone_number: from,
						agent_id: agentId || undefined,
					});
					senders.set(template, sender);
				}
				return sender;
			},
			...(variants
				? { variants: (JSON.parse(variants) as Array<{ templateId: string }>).map((variant) => variant.templateId) }
				: {}),
		};
		settingsCache.set(id, settings);
		return settings;
	};

	/**
	 * The template a recipient is sent: its variant's in an A/B test's test share, the winner's for
	 * the remainder (claimed only once the winner is chosen: lua/includes/jobClaim.lua), else the
	 * campaign's one template.
	 */
	const templateFor = async (campaign: string, settings: SendSettings, variant: number | undefined) => {
		if (!settings.variants || variant === undefined) return settings.templateId;
		if (variant > 0) return settings.variants[variant - 1] ?? settings.templateId;
		if (!settings.winner) {
			const winner = Number(await redis.hget(keys.campaign(settings.from, campaign), 'ab_winner'));
			const template = settings.variants[winner - 1];
			// A remainder recipient is claimed only once decided; should the winner not be readable, nothing goes out.
			if (!template) return undefined;
			settings.winner = template;
		}
		return settings.winner;
	};

	/** When this process last took a stopped campaign's jobs out of the queue (one pass serves the many that follow). */
	const droppedAt = new Map<string, number>();
	const dropStoppedCampaign = async (from: string, campaign: string) => {
		const now = Date.now();
		if (now - (droppedAt.get(campaign) ?? 0) < DROP_AGAIN_AFTER_MS) return;
		for (const [id, at] of droppedAt) if (now - at >= DROP_AGAIN_AFTER_MS) droppedAt.delete(id);
		droppedAt.set(campaign, now);
		const dropped = await dropQueuedSends(context, from, campaign);
		if (dropped > 0)
			log.info({ campaign, dropped }, 'campaign not running: its queued sends were taken out of the queue');
	};

	/**
	 * Sends one claimed recipient of a job ending at `end` and settles it; what the job does next:
	 * 'next' with the place on the clock its settle took for the job's next recipient (Date.now() ms),
	 * and whether that settle was of the job's last index (`over`: the job ends without another gate call).
	 */
	const sendOne = async (
		job: Job<SendJobData>,
		settings: SendSettings,
		campaign: string,
		claim: ClaimedStart,
		token: string,
		end: number,
	): Promise<
		{ next: Place | undefined; over: boolean } | 'stopped' | { hold: number } | { retry: string } | { budget: number }
	> => {
		const { index } = claim;
		const key = `${campaign}/${index}`;
		inFlight.set(key, { campaign, index, token });
		const logChange = (result: string, error: string) => {
			if (result === 'completed') log.info({ campaign }, 'campaign completed');
			if (result === 'paused')
				log.warn(
					{ campaign, reason: error },
					`campaign paused itself after ${config.RUNNER_PAUSE_AFTER_FAILURES} failed recipients in a row`,
				);
		};
		/** Settles this claim; logs the campaign's state change when this settle made it. */
		const settle = async (
			to: Parameters<typeof ledger.settle>[3],
			ref: string,
			error: string,
			counter: Parameters<typeof ledger.settle>[7] = '',
		) => {
			const result = await ledger.settle(
				campaign,
				index,
				token,
				to,
				ref,
				error,
				config.RUNNER_PAUSE_AFTER_FAILURES,
				counter,
			);
			logChange(result, error);
			return result;
		};
		/** A final settle, the job going on: it also takes the job's next recipient's place on the clock. */
		const settleAndGoOn = async (to: 'sent' | 'failed' | 'unknown', ref: string, error: string) => {
			const { result, place, jobOver } = await ledger.settleAndPlace(
				campaign,
				{ index, token },
				to,
				ref,
				error,
				config.RUNNER_PAUSE_AFTER_FAILURES,
				{ end, room },
			);
			logChange(result, error);
			// Measured after the reply, a little later than Redis's own now: never early.
			return {
				next: place === undefined ? undefined : { localMs: Date.now() + place.inUs / 1000, redisUs: place.atUs },
				over: jobOver,
			};
		};
		try {
			if (!claim.row) return await settleAndGoOn('failed', '', 'the recipient is missing from the snapshot');
			const recipient = decodeRecipient(claim.row);
			const template = await templateFor(campaign, settings, recipient.variant);
			if (!template) {
				await settle('pending', '', 'the A/B test has no winner yet');
				return 'stopped';
			}
			const counted = await countCampaignCustomer(context, recipient.phone);
			if (!counted.counted) {
				await settle('pending', '', DAILY_LIMIT_WAIT, 'budget_waits');
				if (await noteBudgetWait(context, { from: settings.from, campaign }, counted))
					log.info(
						{ campaign, nextAt: new Date(counted.nextAt).toISOString() },
						'campaign waits for the daily messaging limit',
					);
				return { budget: counted.waitMs };
			}
			if (performance.now() - claim.answeredAt > freshMs)
				await takeStartAgain(context, { from: settings.from, campaign }, claim.startId);
			const outcome = await settings.senderOf(template)(templateBody(recipient), shutdown);
			switch (outcome.kind) {
				case 'ok': {
					const next = await settleAndGoOn('sent', outcome.messageId ?? '', '');
					if (!settings.templateNamed && outcome.templateName && template === settings.templateId) {
						settings.templateNamed = true;
						await noteTemplateName(context, settings.from, campaign, outcome.templateName);
					}
					return next;
				}
				case 'refused':
					return await settleAndGoOn('failed', '', outcome.reason);
				case 'unknown': {
					const next = await settleAndGoOn('unknown', '', outcome.reason);
					log.warn({ campaign, reason: outcome.reason }, 'send outcome unknown; `campaign reconcile` resolves it');
					return next;
				}
				case 'stop':
					await settle('not_sent', '', outcome.reason);
					await failCampaign(context, campaign, outcome.reason);
					return 'stopped';
				case 'blocked': {
					const sending = { id: campaign, from: settings.from, templateId: template };
					const result = await settleBlocked(context, sending, { index, token }, outcome);
					return result === 'paused' ? 'stopped' : { next: undefined, over: false };
				}
				case 'limited':
					await settle('pending', '', outcome.reason, 'holds');
					log.warn(
						{ campaign, holdMs: config.RUNNER_MESSAGING_LIMIT_HOLD },
						"the service's messaging limit refused a new customer: the number waits; " +
							"set the runner's daily limit to stay under it",
					);
					return { hold: config.RUNNER_MESSAGING_LIMIT_HOLD };
				case 'hold':
					await settle('pending', '', outcome.reason, 'holds');
					return { hold: outcome.waitMs };
				case 'retry': {
					// A recipient has as many tries as a one-recipient job had attempts (RUNNER_SEND_ATTEMPTS).
					const tries = (job.data.tries?.[index] ?? 0) + 1;
					if (tries >= config.RUNNER_SEND_ATTEMPTS)
						return await settleAndGoOn('failed', '', `${outcome.reason} (after ${tries} attempts)`);
					await settle('pending', '', outcome.reason, 'retries');
					await job.updateData({ ...job.data, tries: { ...job.data.tries, [index]: tries } });
					return { retry: outcome.reason };
				}
			}
		} finally {
			inFlight.delete(key);
		}
	};

	/**
	 * A send job: its recipients one after another, each through the start gate, which claims it in the
	 * same step (spacing.ts). Between recipients the job ends when its campaign stopped (the rest stay
	 * pending, and take no start) or goes back to the queue when this process is stopping.
	 */
	return async function processSend(job: Job<SendJobData>, bullToken?: string): Promise<string> {
		const { campaign, index, count = 1, window } = job.data;
		const settings = await settingsOf(campaign);
		if (!settings) return 'no such campaign';
		const token = `${job.id}.${job.attemptsStarted}.${processTag}`;
		// A windowed job lists its recipients: each is a range of one, so a settle takes no place for the next.
		const listed = window?.indexes.filter((listedIndex) => listedIndex >= index);
		const range = listed ? { first: listed[0] ?? 0, end: (listed[0] ?? 0) + 1 } : { first: index, end: index + count };
		let place: Place | undefined;
		/** The last settle was of the job's last index: nothing is left to ask the gate for. */
		let over = false;
		for (let started = 0; ; started++) {
			if (draining.aborted) throw new RateLimitError();
			// Each start has its own name in the start log; the claim is the attempt's.
			const claim =
				listed?.length === 0 || over
					? 'done'
					: await startNextInJob(
							context,
							{ from: settings.from, campaign },
							range,
							{ token, id: `${token}.${started}`, place },
							shutdown,
							window?.opening,
						);
			if (claim === 'stopped') throw new RateLimitError();
			// Its zone's window closed: the rest stay pending, and the feeder feeds them at its next opening.
			if (claim === 'closed') return 'window closed';
			if (claim === 'not running') {
				await dropStoppedCampaign(settings.from, campaign);
				return 'not running';
			}
			if (claim === 'done') {
				if (!listed || listed.length <= 1) return 'done';
				// A listed job's next recipient.
				listed.shift();
				range.first = listed[0];
				range.end = listed[0] + 1;
				place = undefined;
				over = false;
				continue;
			}
			// The next look starts after this recipient: those before it are settled or were skipped.
			range.first = claim.index + 1;
			const next = await sendOne(job, settings, campaign, claim, token, range.end);
			if (next === 'stopped') return 'stopped';
			if ('next' in next) {
				place = next.next;
				over = next.over;
				continue;
			}
			if ('hold' in next) {
				await queues.send(settings.from).rateLimit(next.hold);
				await holdStarts(context, settings.from, next.hold);
				throw new RateLimitError();
			}
			if ('budget' in next) {
				// Until the next customer can be counted, or sooner: a limit raised lets the job go on within the recheck time.
				const waitMs = Math.max(100, Math.min(next.budget, config.RUNNER_DAILY_LIMIT_RECHECK));
				await job.moveToDelayed(Date.now() + waitMs, bullToken);
				throw new DelayedError('waiting for the daily messaging limit');
			}
			// A retry: the job waits its backoff in the delayed set (no
			// attempt of the job used), then goes on from this recipient.
			const tries = job.data.tries?.[claim.index] ?? 1;
			await job.moveToDelayed(Date.now() + sendRetryDelay(config, tries), bullToken);
			throw new DelayedError(`not sent, will retry: ${next.retry}`);
		}
	};
}
