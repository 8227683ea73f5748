/**
 * The campaigns door: every use case its clients (the CLI, the HTTP API and its console, and through
 * the API the Convo node's Campaign resource) call to create, control, schedule and report
 * campaigns, and the replies attributed to them. No rule is written in a client, and a client
 * reaches a domain's stores and Redis only through its door in core/: campaigns, audience,
 * reindex, webhooks, runners (eslint.config.mjs enforces the import side of that).
 */
import { createHash, randomBytes } from 'node:crypto';

import type { RunnerConfig } from '../config';
import type { RunnerContext } from '../context';
import { ConflictError, FieldError, NotFoundError, UserError } from '../errors';
import { cronSettings, nextCronRun } from '../cronSchedules';
import { settingsError } from '../settingNames';
import { IDEMPOTENCY_SECONDS } from '../keys';
import { keepLock, releaseLock } from '../lock';
import { redisScript } from '../redisScripts';
import { campaignNumber } from '../keyGroups';
import { formatOf, type SourceRecord } from '../source';
import { checkUrlAllowed } from '../net/outbound';
import { isHttpUrl, storedSource } from '../net/urls';
import { snapshotCampaign, type DryRunSnapshot, type Snapshot } from '../campaigns/create';
import { budgetDays, showBudget, UNLIMITED } from '../audience/budget';
import { estimateSends } from '../audience/windows';
import {
	API_NAMES,
	CLI_NAMES,
	campaignSettings,
	type AbTestSettings,
	type CampaignSettings,
	type SettingNames,
} from '../campaigns/schema';
import { newSeed, parseTestShare } from '../campaigns/variantSplit';
import {
	createSchedule,
	findSchedule,
	listSchedules as schedulesStored,
	pauseSchedule,
	removeSchedule,
	resumeSchedule,
	scheduleView,
	type ScheduleRecord,
	type ScheduleView,
} from '../campaigns/schedule';
import {
	campaignDetail,
	campaignStatus,
	getCampaign,
	listCampaigns,
	funnelAcross,
	newCampaignId,
	scheduleCampaigns,
	statusOf,
} from '../campaigns/store';
import {
	cancelCampaign,
	pauseCampaign as pauseNow,
	resumeCampaign,
	retryNotSent,
	retryUndelivered,
	setCampaignRate,
} from '../campaigns/control';
import { handOverNumber } from '../sending/feeder';
import { defaultCampaignName } from '../campaigns/names';
import { addStartJob } from '../jobs';
import {
	addRecipients,
	DRAFT_LIFETIME_MS,
	giveBackDraftPlace,
	startDraft,
	takeDraftPlace,
	type ChunkAnswer,
} from '../campaigns/draft';
import {
	draftTest,
	firstAcceptedRow,
	lookAtTestSend,
	sendTest,
	type DryTestSend,
	type TestSend,
} from '../campaigns/testSend';

export { campaignStatus, listCampaigns, resumeCampaign, retryNotSent, retryUndelivered, setCampaignRate };
export { campaignFigures, type CampaignDetail, type CampaignStatus } from '../campaigns/store';
export { CAMPAIGN_SORTS, campaignListQuery, checkedListQuery, pageCampaigns } from '../campaigns/listing';
export { API_NAMES, type CampaignSettings } from '../campaigns/schema';
export { OUTCOMES, type Outcome } from '../ledger';
export { isRefusal } from '../service';

// Rows a client hands to a create: inline JSON rows, or an upload parsed as it streams in.
export { inlineRecords, parseRecords, refuseBinary, type SourceFormat, type SourceRecord } from '../source';
export { reconcileCampaign } from '../campaigns/reconcile';
export { deleteCampaign } from '../campaigns/deletion';
export { chooseCampaignVariant } from '../campaigns/abTest';
export { errorBreakdown, findRecipient, REPORT_COLUMNS, reportRows, reportText } from '../campaigns/report';
export { rateHistory, getCampaign } from '../campaigns/store';

// Replies: the service's message_created events, attributed to the campaign that last messaged the phone.
export { receiveMessageCreated } from '../tracking/attribution';

/** How many of a schedule's campaigns its view lists, newest first (run_count says how many there are). */
const RUNS_SHOWN = 10;

/**
 * A campaign cron schedule as the API, the console and the CLI show it: its settings, state and
 * next run (campaigns/schedule.ts scheduleView), the funnel across its campaigns (each has its own
 * too), how many campaigns it made and the newest of them.
 */
async function scheduleDetail(context: RunnerContext, schedule: ScheduleRecord, allIds?: string[]) {
	const runs = await scheduleCampaigns(context, schedule.id, allIds);
	return {
		...scheduleView(schedule),
		funnel: await funnelAcross(context, runs),
		run_count: runs.length,
		runs: runs.slice(0, RUNS_SHOWN).map((run) => ({
			id: run.id,
			name: run.name,
			state: run.state,
			created_at: new Date(run.createdAt).toISOString(),
		})),
	};
}

/** The campaign cron schedules, newest first, as scheduleDetail shows each. */
export async function listSchedules(context: RunnerContext) {
	const schedules = await schedulesStored(context);
	// Every campaign id read once for all the schedules, not once per schedule.
	const allIds = await context.redis.zrevrange(context.keys.campaigns, 0, -1);
	return Promise.all(schedules.map((schedule) => scheduleDetail(context, schedule, allIds)));
}

function noSchedule(id: string): NotFoundError {
	return new NotFoundError(`No campaign schedule with id ${id}`);
}

/** Pause a cron schedule: it fires nothing until resumed (a runner restarted meanwhile included). */
export async function pauseCampaignSchedule(context: RunnerContext, id: string) {
	const schedule = await pauseSchedule(context, id);
	if (!schedule) throw noSchedule(id);
	context.log.info({ schedule: id }, 'campaign schedule paused');
	return scheduleDetail(context, schedule);
}

/** Resume a paused cron schedule: it fires again from its next time (the times it missed are not made up). */
export async function resumeCampaignSchedule(context: RunnerContext, id: string) {
	const schedule = await resumeSchedule(context, id);
	if (!schedule) throw noSchedule(id);
	context.log.info({ schedule: id }, 'campaign schedule resumed');
	return scheduleDetail(context, schedule);
}

/** Remove a cron schedule: it fires no more; the campaigns it made stay. */
export async function removeCampaignSchedule(context: RunnerContext, id: string) {
	if (!(await findSchedule(context, id))) throw noSchedule(id);
	await removeSchedule(context, id);
	context.log.info({ schedule: id }, 'campaign schedule removed');
	return { id, removed: true as const };
}

/** `test_send`: the test send's answer, when the create asked for one (testSend.ts). */
export type CreateAnswer =
	| (((Snapshot & { kind: 'campaign' }) | { kind: 'schedule'; schedule: ScheduleView }) & {
			test_send?: TestSend;
	  })
	| DryRunAnswer;

/** How a campaign draws from the daily messaging limit, as a dry run reckons it now. */
export interface DailyLimitEstimate {
	limit: number;
	/** How many more customers can be counted now. */
	left: number;
	/** Recipients that would be counted anew; the others (`holding`) are counted already and draw nothing more. */
	drawing: number;
	holding: number;
	/** Recipients sent on the first day (what is left) and on the last. */
	first_day: number;
	last_day: number;
}

/**
 * What a dry run answers: the rows' counts by outcome and by reason (grouped as /errors groups
 * them), the first rejections with their lines, and how long sending the accepted rows would take.
 */
export interface DryRunAnswer extends Omit<DryRunSnapshot, 'zones' | 'alreadyCounted'> {
	kind: 'dry_run';
	dry_run: true;
	/**
	 * Rows per outcome the create would give them (the rules added at create add their outcomes
	 * here; `suppressed` rows are not in `accepted`); `expired`: accepted rows that the end would leave unsent, the
	 * windows and the rate allowing (they are counted in `accepted` too); `capped`: accepted rows the frequency
	 * cap would hold back if they were sent now.
	 */
	counts: { accepted: number; rejected: number; suppressed: number; capped: number; expired?: number };
	/** With a send window: the recipients per zone (an IANA name, or country:XX for a country of several zones). */
	zones?: Array<{ zone: string; recipients: number }>;
	estimate: {
		rate: number;
		/**
		 * Until the last send, the number sending this campaign alone at its rate, waiting for each
		 * zone's window (windows.ts estimateSends).
		 */
		seconds: number;
		/** `at`, the next firing of a cron schedule, or now. */
		starts_at: string;
		ends_at: string;
		/**
		 * Days the campaign takes under the business's daily messaging limit (audience/budget.ts): 1
		 * when every recipient can be counted on the first day; each day after sends up to the limit.
		 */
		days: number;
		/** The daily limit's part of the estimate; absent when unlimited. */
		daily_limit?: DailyLimitEstimate;
		cron?: string;
		tz?: string;
	};
	/** With a test phone: the test a real create would send first, not sent, and the rule that would refuse it. */
	test_send?: DryTestSend;
	/** An A/B test: the seed (`--seed` splits the real run alike) and the split it draws. */
	ab_test?: {
		seed: string;
		test_share: number;
		split: { test: Array<{ variant: number; template_id: string; recipients: number }>; remainder: number };
		decide_after_seconds: number;
		pick_by: string;
		if_tie: string;
	};
}

/**
 * The settings of a create, checked; each error names the setting as the client calls it.
 * `rowsAtHand`: the rows came in the request (no file to name the campaign after).
 */
function checkedSettings(config: RunnerConfig, input: CampaignSettings, names: SettingNames, rowsAtHand: boolean) {
	// An A/B test's campaign template is its first variant's.
	const firstVariant = input.variants?.[0]?.split(':')[0];
	const parsed = campaignSettings.safeParse(
		input.templateId === undefined && firstVariant ? { ...input, templateId: firstVariant } : input,
	);
	if (!parsed.success) throw settingsError(parsed.error, names);
	const settings = parsed.data;
	const numbers = config.RUNNER_NUMBERS;
	if (numbers && !numbers.includes(settings.from))
		throw new FieldError(
			`${names.from} is not one of the business's numbers (RUNNER_NUMBERS): a campaign sends only from those`,
			names.from,
		);
	if (settings.cron && settings.at)
		throw new UserError(
			`${names.at} and ${names.cron} exclude each other: ${names.at} runs once, ${names.cron} repeats`,
		);
	const schedule = cronSettings(settings, names);
	const rate = settings.rate ?? config.RUNNER_DEFAULT_RATE;
	const name = settings.name ?? defaultCampaignName(rowsAtHand ? undefined : settings.source, Date.now());
	const endAt = settings.endAt === undefined ? undefined : Date.parse(settings.endAt);
	if (endAt !== undefined) {
		if (schedule)
			throw new UserError(
				`${names.endAt} does not go with ${names.cron}: an end is one time, ` +
					'a schedule repeats (its firings are campaigns of their own)',
			);
		const startsAt = settings.at ? Date.parse(settings.at) : Date.now() + config.RUNNER_TEST_CLOCK_OFFSET_MS;
		if (endAt <= startsAt)
			throw new UserError(`${names.endAt} must be after the campaign starts (${settings.at ? names.at : 'now'})`);
	}
	if (settings.window && schedule)
		throw new UserError(
			`${names.window} does not go with ${names.cron} yet: ` +
				"give the schedule's firings their hours with the cron pattern",
		);
	const abTest = abTestSettings(settings, names, schedule !== undefined);
	const common = {
		name,
		templateId: abTest ? abTest.variants[0].templateId : settings.templateId,
		from: settings.from,
		agentId: settings.agentId,
		rate,
		source: settings.source,
		format: settings.format,
		delimiter: settings.delimiter,
		window: settings.window,
		endAt,
		whenCapped: settings.whenCapped,
		...(settings.transactional ? { transactional: true } : {}),
		...(abTest ? { abTest } : {}),
	};
	return { settings, common, schedule };
}

/** The settings' A/B test (campaigns/abTest.ts), checked; undefined without `variants`. */
function abTestSettings(
	settings: ReturnType<typeof campaignSettings.parse>,
	names: SettingNames,
	repeats: boolean,
): AbTestSettings | undefined {
	const variantsName = names.variants ?? 'variants';
	const testNames = [
		[settings.testShare, names.testShare],
		[settings.pickBy, names.pickBy],
		[settings.decideAfter, names.decideAfter],
		[settings.ifTie, names.ifTie],
		[settings.seed, names.seed],
		[settings.minPerVariant, names.minPerVariant],
	] as const;
	if (!settings.variants) {
		const stray = testNames.find(([value]) => value !== undefined);
		if (stray) throw new UserError(`${stray[1]} is a setting of an A/B test: give two or more ${variantsName}`);
		return undefined;
	}
	if (repeats) throw new UserError(`${variantsName} does not go with a cron schedule yet: each firing would test anew`);
	if (settings.testShare === undefined)
		throw new FieldError(
			`${names.testShare} is required with ${variantsName} (for example 20%)`,
			names.testShare ?? '',
		);
	const decideAfter = settings.decideAfter ?? '';
	const duration = /^(\d+)(ms|s|m|h)?$/.exec(decideAfter.trim());
	const decideAfterMs = duration
		? Number(duration[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(duration[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
		: NaN;
	if (!(decideAfterMs >= 1000 && decideAfterMs <= 30 * 86_400_000))
		throw new FieldError(
			`${names.decideAfter} must be a duration from 1s to 720h (for example 2h, 30m or 90s)`,
			names.decideAfter ?? '',
		);
	return {
		variants: settings.variants,
		seed: settings.seed ?? newSeed(),
		share: parseTestShare(String(settings.testShare), names.testShare ?? 'test_share'),
		pickBy: settings.pickBy ?? 'read',
		decideAfterMs,
		ifTie: settings.ifTie ?? 'first',
		minimum: settings.minPerVariant ?? DEFAULT_MIN_PER_VARIANT,
	};
}

/** The rule's minimum recipients per variant when the create names none. */
const DEFAULT_MIN_PER_VARIANT = 50;

/** `records`: rows already at hand (an upload, inline rows); `input.source` then only names them. */
/**
 * The rules a campaign's settings must meet that need neither Redis nor the service nor its rows:
 * what `campaign create` checks before it connects, so a wrong option is named even where Redis is
 * down. createCampaign checks them again (the API calls it directly).
 */
export function checkCampaignSettings(
	config: RunnerConfig,
	input: CampaignSettings,
	names: SettingNames = CLI_NAMES,
): void {
	const { common } = checkedSettings(config, input, names, false);
	formatOf(common.source, common.format, names);
}

/**
 * `claim`: the Idempotency-Key this create runs under (see once); its answer is kept in the same
 * step that makes the campaign visible.
 */
export async function createCampaign(
	context: RunnerContext,
	input: CampaignSettings,
	records?: AsyncIterable<SourceRecord>,
	names: SettingNames = CLI_NAMES,
	claim?: OnceClaim,
): Promise<CreateAnswer> {
	const { settings, common, schedule: repeat } = checkedSettings(context.config, input, names, records !== undefined);

	if (repeat && records)
		throw new UserError('a cron schedule re-reads its recipients at each firing: give a file path or a URL, not rows');
	if (!records) {
		// Told now, where the client's names are known (the snapshot
		// and a schedule's firings read a source of the same name).
		formatOf(common.source, common.format, names);
		await checkUrlAllowed(context.config, common.source, names.source);
	}
	const testTo = settings.testTo;
	if (settings.dryRun)
		return dryRun(context, common, {
			startAt: settings.at ? Date.parse(settings.at) : undefined,
			repeat,
			testTo,
			records,
			names,
		});
	if (repeat) {
		// A schedule is tested once, at its creation, with the first row its source would give now.
		let test_send: TestSend | undefined;
		if (testTo) {
			const row = await firstAcceptedRow(context, common, names);
			if (!row)
				throw new UserError(
					`${names.testTo}: ${names.source} has no row a campaign would accept now, ` +
						'so there is nothing to test with; nothing was created',
				);
			test_send = await sendTest(context, common, row, testTo, names.testTo);
		}
		const stored = storedSource(context.config, common.source, names.source);
		const schedule = await createSchedule(
			context,
			{ ...common, source: stored.source, sealedSource: stored.sealed, ...repeat },
			names,
		);
		context.log.info({ schedule: schedule.id, cron: schedule.cron, tz: schedule.tz }, 'campaign schedule created');
		return { kind: 'schedule', schedule: scheduleView(schedule), ...(test_send ? { test_send } : {}) };
	}

	const id = newCampaignId();
	const startAt = settings.at ? Date.parse(settings.at) : undefined;
	// The start job just before the commit: a create that dies before its commit leaves a job that
	// finds no campaign and does nothing; one that dies after it leaves a scheduled campaign with its job.
	// The test send goes before both, once every row is read: a refusal leaves nothing (the answer
	// kept for an Idempotency-Key is read at the commit, so it holds the test's answer too).
	const answer: { kind: 'campaign'; test_send?: TestSend } = { kind: 'campaign' };
	const beforeCommit = async (first: string | undefined) => {
		if (testTo && first) answer.test_send = await sendTest(context, common, first, testTo, names.testTo);
		if (startAt) await addStartJob(context, { campaign: id, dueAt: startAt }, { afterCommit: true });
	};
	const snapshot = await snapshotCampaign(context, {
		...common,
		id,
		state: startAt ? 'scheduled' : 'running',
		startAt,
		records,
		beforeCommit,
		claim: claim && { ...claim, answer },
	});
	context.log.info(
		{
			campaign: id,
			state: snapshot.state,
			recipients: snapshot.accepted,
			rejected: snapshot.rejected,
			...(snapshot.suppressed > 0 ? { suppressed: snapshot.suppressed } : {}),
		},
		'campaign created',
	);
	return { ...answer, ...snapshot };
}

/**
 * A create's dry run: the rows are read and checked by the create's own snapshot in its dry mode
 * (create.ts), so every rule a create applies to a row applies here, and nothing is stored or
 * sent. A cron schedule's rows are read from its source now, as its next firing would read them.
 */
async function dryRun(
	context: RunnerContext,
	common: ReturnType<typeof checkedSettings>['common'],
	options: {
		startAt?: number;
		repeat?: { cron: string; tz: string };
		testTo?: string;
		records?: AsyncIterable<SourceRecord>;
		names: SettingNames;
	},
): Promise<DryRunAnswer> {
	const { repeat, testTo, names } = options;
	// Refused as a real create refuses them: a pattern BullMQ would not take, a source URL it could not keep.
	const startsAt = repeat ? nextCronRun(repeat, names) : (options.startAt ?? Date.now());
	if (repeat) storedSource(context.config, common.source, names.source);
	const { zones, variantCounts, alreadyCounted, ...found } = await snapshotCampaign(context, {
		...common,
		id: newCampaignId(),
		state: 'running',
		records: options.records,
		dryRun: true,
	});
	// Windows and the end are read on the campaign's clock (a test's offset: RUNNER_TEST_CLOCK_OFFSET_MS).
	const clockOffset = repeat || options.startAt ? 0 : context.config.RUNNER_TEST_CLOCK_OFFSET_MS;
	const sends = estimateSends({
		rate: common.rate,
		startsAt: startsAt + clockOffset,
		accepted: found.accepted,
		week: common.window,
		zones: zones?.map(([zone, count]) => [zone, count]),
		endAt: common.endAt,
	});
	// Past the first day, each day's customers can be counted a window after the first day's were: the
	// last day's recipients go out from then, at the rate and in the windows.
	const budget = await showBudget(context);
	const drawing = Math.max(0, found.accepted - alreadyCounted);
	const { days, firstDay, lastDay } = budgetDays(budget, drawing);
	const lastDaySends =
		days === 1
			? sends
			: estimateSends({
					rate: common.rate,
					startsAt: startsAt + clockOffset + (days - 1) * budget.span_ms,
					accepted: lastDay,
					week: common.window,
					zones: zones?.map(([zone, count]) => [zone, Math.ceil((count * lastDay) / Math.max(1, found.accepted))]),
				});
	const sendSeconds = Math.ceil((lastDaySends.endsAt - startsAt - clockOffset) / 1000);
	// An A/B test: the sends, and the wait for the decision while its test is sent before the
	// remainder (decide_after at most, counted from the start).
	const test = common.abTest;
	const split = variantCounts;
	const testSeconds = split ? Math.ceil(split.slice(1).reduce((sum, n) => sum + n, 0) / common.rate) : 0;
	const seconds =
		test && split ? sendSeconds + Math.max(0, Math.ceil(test.decideAfterMs / 1000) - testSeconds) : sendSeconds;
	const reasons =
		sends.expired > 0
			? [
					...found.reasons,
					{
						outcome: 'expired' as const,
						reason: `the campaign would end (${names.endAt}) before its turn${common.window ? ' in its window' : ''}`,
						count: sends.expired,
						varies: false,
					},
				]
			: found.reasons;
	context.log.info(
		{
			accepted: found.accepted,
			rejected: found.rejected,
			expired: sends.expired,
			...(found.suppressed > 0 ? { suppressed: found.suppressed } : {}),
		},
		'campaign dry run',
	);
	return {
		kind: 'dry_run',
		dry_run: true,
		...found,
		reasons,
		counts: {
			accepted: found.accepted,
			rejected: found.rejected,
			suppressed: found.suppressed,
			capped: found.capped,
			...(common.endAt !== undefined ? { expired: sends.expired } : {}),
		},
		...(zones ? { zones: zones.map(([zone, recipients]) => ({ zone, recipients })) } : {}),
		...(test && split
			? {
					ab_test: {
						seed: test.seed,
						test_share: test.share,
						split: {
							test: test.variants.map((variant, i) => ({
								variant: i + 1,
								template_id: variant.templateId,
								recipients: split[i + 1] ?? 0,
							})),
							remainder: split[0] ?? 0,
						},
						decide_after_seconds: Math.ceil(test.decideAfterMs / 1000),
						pick_by: test.pickBy,
						if_tie: test.ifTie,
					},
				}
			: {}),
		estimate: {
			rate: common.rate,
			seconds,
			starts_at: new Date(startsAt).toISOString(),
			ends_at: new Date(startsAt + seconds * 1000).toISOString(),
			days,
			...(budget.limit !== UNLIMITED
				? {
						daily_limit: {
							limit: budget.limit,
							left: budget.left ?? 0,
							drawing,
							holding: alreadyCounted,
							first_day: firstDay,
							last_day: lastDay,
						},
					}
				: {}),
			...(repeat ?? {}),
		},
		...(testTo ? { test_send: await lookAtTestSend(context, common, testTo) } : {}),
	};
}

/**
 * A draft: a campaign created with the settings and the rows given so far (maybe none), filled
 * by addRecipients a chunk at a time and sent only once startCampaign is called. Never started,
 * it is removed after 24 h.
 */
async function createDraft(
	context: RunnerContext,
	input: CampaignSettings,
	records?: AsyncIterable<SourceRecord>,
	names: SettingNames = CLI_NAMES,
	claim?: OnceClaim,
): Promise<Snapshot & { kind: 'campaign' }> {
	// A draft is made over the API only: its source is a URL, or a label of rows it gets in the request.
	const { settings, common } = checkedSettings(
		context.config,
		input,
		names,
		records !== undefined || !isHttpUrl(input.source),
	);
	if (settings.cron)
		throw new UserError(`${names.cron} does not go with a draft: a draft is one campaign, started once`);
	if (!records) await checkUrlAllowed(context.config, common.source, names.source);
	const id = newCampaignId();
	const startAt = settings.at ? Date.parse(settings.at) : undefined;
	const draft = {
		startsAs: startAt ? ('scheduled' as const) : ('running' as const),
		expiresAt: Date.now() + DRAFT_LIFETIME_MS,
		testTo: settings.testTo,
	};
	await takeDraftPlace(context, id, draft.expiresAt);
	let snapshot: Snapshot;
	try {
		snapshot = await snapshotCampaign(context, {
			...common,
			id,
			state: 'draft',
			startAt,
			records: records ?? (async function* () {})(),
			draft,
			claim: claim && { ...claim, answer: { kind: 'campaign' } },
		});
	} catch (error) {
		await giveBackDraftPlace(context, id).catch(() => undefined);
		throw error;
	}
	context.log.info(
		{ campaign: id, recipients: snapshot.accepted, rejected: snapshot.rejected },
		'draft campaign created',
	);
	return { kind: 'campaign', ...snapshot };
}

/**
 * Starts a draft (running, or scheduled when it has a start time); a campaign that is no longer a
 * draft is left alone, so a retried call is harmless. Answers the campaign as GET shows it.
 */
export async function startCampaign(context: RunnerContext, id: string) {
	// A draft created with a test phone sends its test first, once (its answer kept as an
	// Idempotency-Key's: a start retried after an accepted test does not test again).
	const campaign = await getCampaign(context, id);
	const test = await draftTest(context, campaign);
	const tested =
		test &&
		(await once(context, campaign.from, `test:${id}`, 'start', () =>
			sendTest(context, campaign, test.row, test.to, API_NAMES.testTo),
		));
	await startDraft(context, id);
	const view = await campaignView(context, id);
	return tested
		? {
				...view,
				test_send: {
					to: tested.to,
					accepted: tested.accepted,
					...(tested.message_id ? { message_id: tested.message_id } : {}),
				},
			}
		: view;
}

/** A campaign's status and settings: GET /api/campaigns/:id. */
export async function campaignView(context: RunnerContext, id: string) {
	const campaign = await getCampaign(context, id);
	return campaignDetail(campaign, await statusOf(context, campaign));
}

/** Pause a campaign; its number goes on with its other campaigns at once (handOverNumber). */
export async function pauseCampaign(context: RunnerContext, id: string) {
	const state = await pauseNow(context, id);
	await handOverNumber(context, id);
	return state;
}

/**
 * Pause or resume a campaign, or a cron schedule by its id (the CLI's `campaign pause|resume` take
 * either, as cancel does): a schedule answers `schedule: true`, its state (active or paused) and
 * when it fires next.
 */
export async function pauseOrResume(context: RunnerContext, id: string, act: 'pause' | 'resume') {
	if (await findSchedule(context, id)) {
		const schedule = await (act === 'pause' ? pauseCampaignSchedule : resumeCampaignSchedule)(context, id);
		return { id, state: schedule.state, schedule: true as const, next_run_at: schedule.next_run_at };
	}
	return { id, state: await (act === 'pause' ? pauseCampaign : resumeCampaign)(context, id) };
}

/**
 * Cancel a campaign, or stop a cron schedule (its past campaigns stay). The number is handed over once
 * the pending recipients are moved: a feeder pass before that would move them itself, and the
 * answer would not count them.
 */
export async function cancel(context: RunnerContext, id: string) {
	if (await findSchedule(context, id)) {
		await removeSchedule(context, id);
		return { id, state: 'cancelled' as const, schedule: true, cancelled: 0 };
	}
	const answer = await cancelCampaign(context, id);
	await handOverNumber(context, id);
	return { id, ...answer };
}

const LEASE_PREFIX = 'creating:';

/**
 * The slot and lease token of a request running under an Idempotency-Key. A work that commits in
 * one Redis script (a create, a draft's chunk) writes its answer to the slot in that same script,
 * and only while the lease is still its own: no crash falls between "done" and "answer kept".
 */
interface OnceClaim {
	slot: string;
	token: string;
}

/**
 * Does `work` once per `key` within 24 h and keeps its answer: a client that retries (an n8n
 * execution run again) gets the first answer back instead of a second campaign or a chunk added
 * twice. `scope` keeps keys of different requests apart (a chunk's key is scoped to its campaign);
 * the create's scope is empty. While the first request runs, the key holds a lease of
 * RUNNER_IDEMPOTENCY_LEASE that the work renews, and a second request with the key is a conflict
 * (409); a request that failed, or whose process died, frees the key (at once, or when the lease
 * runs out), so the retry runs. The key lives in the group of `from`, the number the work's
 * campaign sends from (keys.ts), where the work's one script keeps the answer with its result.
 */
async function once<T extends object>(
	context: RunnerContext,
	from: string,
	scope: string,
	key: string,
	work: (claim: OnceClaim) => Promise<T>,
): Promise<T & { replayed: boolean }> {
	const { redis } = context;
	const slot = context.keys.idempotency(
		from,
		createHash('sha256')
			.update(scope === '' ? key : `${scope}\n${key}`)
			.digest('hex'),
	);
	const token = `${LEASE_PREFIX}${randomBytes(12).toString('hex')}`;
	// How long a key stays `creating` unless its work renews it: a create killed midway frees its
	// key within this time, so the client's retry runs instead of answering 409 for a day.
	const leaseMs = context.config.RUNNER_IDEMPOTENCY_LEASE;
	if ((await redis.set(slot, token, 'PX', leaseMs, 'NX')) !== 'OK') {
		const existing = await redis.get(slot);
		if (existing === null || existing.startsWith(LEASE_PREFIX))
			throw new ConflictError(
				'a request with this Idempotency-Key is still in progress; ' +
					`ask again in a moment (a request that died frees its key within ${leaseMs / 1000} s)`,
			);
		return { ...(JSON.parse(existing) as T), replayed: true };
	}
	const stopRenewing = keepLock(redis, slot, token, leaseMs, {
		error: (error) => context.log.warn({ err: error.message }, 'idempotency lease not renewed'),
	});
	try {
		const answer = await work({ slot, token });
		await redisScript(redis, 'settleOnce')([slot], [token, JSON.stringify(answer), IDEMPOTENCY_SECONDS]);
		return { ...answer, replayed: false };
	} catch (error) {
		await releaseLock(redis, slot, token).catch(() => undefined);
		throw error;
	} finally {
		stopRenewing();
	}
}

/** An Idempotency-Key as a client passes it on: only a non-empty one makes the work run once. */
const usable = (key: string | undefined): key is string => typeof key === 'string' && key.length > 0;

/**
 * Create a campaign (or with `draft`, a draft); with an Idempotency-Key, once per key within 24 h
 * (see once): a retry gets the first answer back, with `replayed` true.
 */
export function createCampaignOnce(
	context: RunnerContext,
	request: {
		input: CampaignSettings;
		records?: AsyncIterable<SourceRecord>;
		names?: SettingNames;
		draft?: boolean;
		key?: string;
	},
): Promise<CreateAnswer & { replayed?: boolean }> {
	const { input, records, names = CLI_NAMES } = request;
	if (input.dryRun && request.draft)
		throw new UserError(
			`${names === API_NAMES ? 'dry_run' : '--dry-run'} does not go with a draft: a dry run stores nothing, ` +
				'so it has no draft to fill; check all the rows in one dry run',
		);
	// A dry run stores nothing, an Idempotency-Key's answer included: a retry runs it again.
	if (input.dryRun) return createCampaign(context, input, records, names);
	const work = (claim?: OnceClaim) =>
		request.draft
			? createDraft(context, input, records, names, claim)
			: createCampaign(context, input, records, names, claim);
	// The key is kept with the number the campaign sends from (its commit writes the answer); a
	// number that is not one is refused by the work itself, which keeps no answer.
	const from = campaignSettings.shape.from.safeParse(input.from);
	return usable(request.key) && from.success ? once(context, from.data, '', request.key, work) : work();
}

/** Add a chunk of rows to a draft; with an Idempotency-Key (scoped to the campaign), once per key (see once). */
export async function addRecipientsOnce(
	context: RunnerContext,
	id: string,
	rows: unknown[],
	firstLine: number | undefined,
	key?: string,
): Promise<ChunkAnswer & { replayed?: boolean }> {
	const work = (claim?: OnceClaim) => addRecipients(context, id, rows, firstLine, claim);
	if (!usable(key)) return work();
	// The key is kept with the campaign's number (its chunk's script
	// writes the answer); no such campaign: the work says so.
	const from = await campaignNumber(context, id);
	return from === undefined ? work() : once(context, from, `recipients:${id}`, key, work);
}
