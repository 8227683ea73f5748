/**
 * The send processor (of the send queues' `send` jobs, jobs.ts): one job is up to SEND_JOB_SIZE
 * recipients of one campaign, sent one after another, or at a high rate in volleys (as many as the
 * rate has in RUNNER_SEND_VOLLEY, sent together). Per recipient, or per volley: take the starts and
 * claim in the ledger (one step, spacing.ts), send B8 once each, settle (the final answers of a
 * volley in one step). What each answer of the service means is decided by
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
import { holdStarts, startNextInJob, takeStartAgain, type ClaimedVolley, type Place } from './spacing';
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

	/** What a job does after a volley: go on (the place its settle took; `over`: that was its last index), or not. */
	type Step =
		| { next: Place | undefined; over: boolean }
		| 'stopped'
		| { hold: number }
		| { retry: string; tries: number }
		| { budget: number };

	/**
	 * Sends a job's claimed volley (one recipient, or several taken together: RUNNER_SEND_VOLLEY) of
	 * a job ending at `end`, all at once, and settles each: the final answers (sent, failed,
	 * unknown) in one call that also takes the place of the job's next volley, the others each on
	 * its own as before. What the job does next: the strongest of the volley's answers (a stop, then
	 * a hold, the daily budget, a retry), else it goes on.
	 */
	const sendVolley = async (
		job: Job<SendJobData>,
		settings: SendSettings,
		campaign: string,
		volley: ClaimedVolley,
		token: string,
		end: number,
	): Promise<Step> => {
		const logChange = (result: string, error: string) => {
			if (result === 'completed') log.info({ campaign }, 'campaign completed');
			if (result === 'paused')
				log.warn(
					{ campaign, reason: error },
					`campaign paused itself after ${config.RUNNER_PAUSE_AFTER_FAILURES} failed recipients in a row`,
				);
		};
		/** Settles a claim back to pending or not sent (a call each); logs the campaign's state change it made. */
		const settle = async (
			index: number,
			to: Parameters<typeof ledger.settle>[3],
			error: string,
			counter: Parameters<typeof ledger.settle>[7] = '',
		) => {
			const result = await ledger.settle(
				campaign,
				index,
				token,
				to,
				'',
				error,
				config.RUNNER_PAUSE_AFTER_FAILURES,
				counter,
			);
			logChange(result, error);
			return result;
		};
		type Final = { index: number; to: 'sent' | 'failed' | 'unknown'; ref: string; error: string };
		const finals: Final[] = [];
		let stopped = false;
		let hold = 0;
		let budget: number | undefined;
		let retry: { reason: string; tries: number } | undefined;
		/** The job's tries per recipient, with this volley's retries added (written once). */
		let tries: Record<string, number> | undefined;
		/** A blocked send that paused nothing: the job goes on with a fresh start (its settle took no place). */
		let freshStart = false;

		for (const { index } of volley.recipients) inFlight.set(`${campaign}/${index}`, { campaign, index, token });
		try {
			// Before any send: each recipient's template and its count in the daily budget, in order;
			// once the budget is spent, the rest of the volley waits with it.
			const ready: Array<{ index: number; template: string; body: ReturnType<typeof templateBody> }> = [];
			for (const { index, row } of volley.recipients) {
				if (!row) {
					finals.push({ index, to: 'failed', ref: '', error: 'the recipient is missing from the snapshot' });
					continue;
				}
				const recipient = decodeRecipient(row);
				const template = await templateFor(campaign, settings, recipient.variant);
				if (!template) {
					await settle(index, 'pending', 'the A/B test has no winner yet');
					stopped = true;
					continue;
				}
				if (budget !== undefined) {
					await settle(index, 'pending', DAILY_LIMIT_WAIT, 'budget_waits');
					continue;
				}
				const counted = await countCampaignCustomer(context, recipient.phone);
				if (!counted.counted) {
					await settle(index, 'pending', DAILY_LIMIT_WAIT, 'budget_waits');
					if (await noteBudgetWait(context, { from: settings.from, campaign }, counted))
						log.info(
							{ campaign, nextAt: new Date(counted.nextAt).toISOString() },
							'campaign waits for the daily messaging limit',
						);
					budget = counted.waitMs;
					continue;
				}
				ready.push({ index, template, body: templateBody(recipient) });
			}
			if (ready.length > 0 && performance.now() - volley.answeredAt > freshMs)
				await takeStartAgain(context, { from: settings.from, campaign }, volley.startId, volley.recipients.length);
			const outcomes = await Promise.all(
				ready.map(({ template, body }) => settings.senderOf(template)(body, shutdown)),
			);
			let stopReason: string | undefined;
			for (const [at, outcome] of outcomes.entries()) {
				const { index, template } = ready[at];
				switch (outcome.kind) {
					case 'ok':
						finals.push({ index, to: 'sent', ref: outcome.messageId ?? '', error: '' });
						if (!settings.templateNamed && outcome.templateName && template === settings.templateId) {
							settings.templateNamed = true;
							await noteTemplateName(context, settings.from, campaign, outcome.templateName);
						}
						break;
					case 'refused':
						finals.push({ index, to: 'failed', ref: '', error: outcome.reason });
						break;
					case 'unknown':
						finals.push({ index, to: 'unknown', ref: '', error: outcome.reason });
						log.warn({ campaign, reason: outcome.reason }, 'send outcome unknown; `campaign reconcile` resolves it');
						break;
					case 'stop':
						await settle(index, 'not_sent', outcome.reason);
						stopReason ??= outcome.reason;
						break;
					case 'blocked': {
						const sending = { id: campaign, from: settings.from, templateId: template };
						const result = await settleBlocked(context, sending, { index, token }, outcome);
						if (result === 'paused') stopped = true;
						else freshStart = true;
						break;
					}
					case 'limited':
						await settle(index, 'pending', outcome.reason, 'holds');
						log.warn(
							{ campaign, holdMs: config.RUNNER_MESSAGING_LIMIT_HOLD },
							"the service's messaging limit refused a new customer: the number waits; " +
								"set the runner's daily limit to stay under it",
						);
						hold = Math.max(hold, config.RUNNER_MESSAGING_LIMIT_HOLD);
						break;
					case 'hold':
						await settle(index, 'pending', outcome.reason, 'holds');
						hold = Math.max(hold, outcome.waitMs);
						break;
					case 'retry': {
						// A recipient has as many tries as a one-recipient job had attempts (RUNNER_SEND_ATTEMPTS).
						const triesNow = (job.data.tries?.[index] ?? 0) + 1;
						if (triesNow >= config.RUNNER_SEND_ATTEMPTS) {
							finals.push({ index, to: 'failed', ref: '', error: `${outcome.reason} (after ${triesNow} attempts)` });
							break;
						}
						await settle(index, 'pending', outcome.reason, 'retries');
						tries = { ...(tries ?? job.data.tries), [index]: triesNow };
						retry = { reason: outcome.reason, tries: Math.max(retry?.tries ?? 0, triesNow) };
						break;
					}
				}
			}
			const goesOn = !stopped && stopReason === undefined && hold === 0 && budget === undefined && !retry;
			let next: Step = { next: undefined, over: false };
			if (finals.length > 0) {
				const settled = await ledger.settleAndPlace(
					campaign,
					token,
					finals.sort((x, y) => x.index - y.index),
					config.RUNNER_PAUSE_AFTER_FAILURES,
					{ end, room, volleyMs: config.RUNNER_SEND_VOLLEY, place: goesOn && !freshStart },
				);
				logChange(settled.result, finals.find(({ error }) => error)?.error ?? '');
				// Measured after the reply, a little later than Redis's own now: never early.
				next = {
					next:
						settled.place === undefined
							? undefined
							: { localMs: Date.now() + settled.place.inUs / 1000, redisUs: settled.place.atUs },
					over: settled.jobOver,
				};
			}
			if (stopReason !== undefined) {
				await failCampaign(context, campaign, stopReason);
				return 'stopped';
			}
			if (stopped) return 'stopped';
			if (hold > 0) return { hold };
			if (budget !== undefined) return { budget };
			if (retry) {
				await job.updateData({ ...job.data, tries });
				return { retry: retry.reason, tries: retry.tries };
			}
			return next;
		} finally {
			for (const { index } of volley.recipients) inFlight.delete(`${campaign}/${index}`);
		}
	};

	/**
	 * A send job: its recipients one after another or in volleys, each through the start gate, which
	 * claims them in the same step (spacing.ts). Between volleys the job ends when its campaign stopped (the rest stay
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
			// The next look starts after this volley: those before it are settled or were skipped.
			range.first = (claim.recipients.at(-1)?.index ?? range.first - 1) + 1;
			const next = await sendVolley(job, settings, campaign, claim, token, range.end);
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
			await job.moveToDelayed(Date.now() + sendRetryDelay(config, next.tries), bullToken);
			throw new DelayedError(`not sent, will retry: ${next.retry}`);
		}
	};
}
