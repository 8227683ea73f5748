/**
 * A campaign's record in Redis (one hash): settings, state, counters per outcome, feed cursor.
 * Reading it and turning it into the status every client shows lives here, once.
 */
import type { CampaignFunnel, CampaignState } from 'convo-contract';

import { OUTCOMES, counterField, type Outcome } from '../ledger';
import { newId } from '../keys';
import { campaignNumber } from '../keyGroups';
import type { RunnerContext } from '../context';
import { NotFoundError } from '../errors';
import { redisScript } from '../redisScripts';
import { storedCampaignName } from './names';
import { repliedCount } from '../tracking/replies';
import { trackingMode, type TrackingMode } from '../tracking/tracking';
import { decodeWindow, describeWindow, type WeekWindow, type ZoneTable } from '../audience/windows';
import { abTestOf, abTestSummary, abTestView, type AbTestRecord } from './abTest';
import { isoOrNull } from '../isoTime';

/**
 * The states are the contract's (clients read them); `draft`: filled in chunks
 * (campaigns/draft.ts), nothing sent until started.
 */
export type { CampaignState };

export interface CampaignRecord {
	id: string;
	name: string;
	state: CampaignState;
	templateId: string;
	/** The template's name as the service's first accepted send named it; absent until then. */
	templateName?: string;
	from: string;
	agentId?: string;
	rate: number;
	source: string;
	scheduleId?: string;
	startAt?: number;
	createdAt: number;
	finishedAt?: number;
	total: number;
	cursor: number;
	lastProgressAt: number;
	/** When it last became running (started, resumed, retried): its rate counts only the seconds since. */
	runningSince?: number;
	lastError?: string;
	/** Why it paused (CampaignStatus.paused_reason), and the service's message for a refusal; kept until it runs. */
	pausedReason?: string;
	pausedMessage?: string;
	/** Exempt from the suppression list (audience/suppression.ts): the operator said its messages are not marketing. */
	transactional: boolean;
	/** A recipient over the frequency cap: capped, or waits until allowed (audience/cap.ts). */
	whenCapped: 'skip' | 'wait';
	counts: Record<Outcome, number>;
	/** 429 answers that held the number, and retries after 5xx or a refused connection. */
	holds: number;
	retries: number;
	/** A send window in each recipient's local time, and its zones (audience/windows.ts); absent without one. */
	window?: WeekWindow;
	zones?: ZoneTable;
	/** Epoch ms after which unsent recipients are expired (`--end`). */
	endAt?: number;
	/** Tests only (RUNNER_TEST_CLOCK_OFFSET_MS): ms added to the clock send windows and the end are read on. */
	clockOffset: number;
	/** An A/B test of templates (abTest.ts); absent for a campaign of one template. */
	abTest?: AbTestRecord;
	/**
	 * Waiting for the daily messaging limit (audience/budget.ts): when the next customer can be
	 * counted (ms on the budget's clock); cleared by the campaign's next send.
	 */
	budgetNextAt?: number;
	/** Delivery tracking's counters (tracking/tracking.ts), kept on the hash with each change. */
	delivery: {
		delivered: number;
		read: number;
		failed: number;
		reasons: Array<{ reason: string; count: number }>;
		settled: boolean;
		mode?: TrackingMode;
	};
}

export interface CampaignStatus {
	id: string;
	/** Shown beside the id (given at create, or told from its source: names.ts). */
	name: string;
	state: CampaignState;
	counts: Record<Outcome, number>;
	/** Sends per second over the last 10 seconds. */
	rate: number;
	eta_seconds: number | null;
	last_error: string | null;
	/**
	 * While paused, why: `operator`, `failures` (RUNNER_PAUSE_AFTER_FAILURES), or the service refused
	 * its sends: `template_refused`, `number_refused`, `unauthorized`; null otherwise.
	 */
	paused_reason: string | null;
	/** While paused for a refusal, the service's message; null otherwise. */
	paused_message: string | null;
	/** When a campaign created with a start time (`--at`) starts or started; null for one that started at its create. */
	start_at: string | null;
	/**
	 * Why a running campaign sends nothing now, and until when: null when it is not waiting. Only the
	 * daily messaging limit makes one wait this way (audience/budget.ts).
	 */
	waiting: { reason: 'daily_limit'; next_at: string; message: string } | null;
	/** Absent only where a status is made without Redis at hand. */
	funnel?: CampaignFunnel;
	/** An A/B test's phase, split and per-variant funnel beside the rule's figures (abTest.ts). */
	ab_test?: Awaited<ReturnType<typeof abTestView>>;
}

export function newCampaignId(): string {
	return newId('c');
}

/** A campaign's hash as read from Redis (or as an event copied it) turned into its record. */
export function recordFromHash(hash: Record<string, string>): CampaignRecord {
	const number = (key: string) => Number(hash[key] ?? 0);
	return {
		id: hash.id,
		name: storedCampaignName(hash, number('created_at')),
		state: hash.state as CampaignState,
		templateId: hash.template_id,
		templateName: hash.template_name || undefined,
		from: hash.from,
		agentId: hash.agent_id || undefined,
		rate: number('rate'),
		source: hash.source,
		scheduleId: hash.schedule_id || undefined,
		startAt: hash.start_at ? number('start_at') : undefined,
		createdAt: number('created_at'),
		finishedAt: hash.finished_at ? number('finished_at') : undefined,
		total: number('total'),
		cursor: number('cursor'),
		lastProgressAt: number('last_progress_at'),
		runningSince: hash.running_since ? number('running_since') : undefined,
		lastError: hash.last_error || undefined,
		pausedReason: hash.paused_reason || undefined,
		pausedMessage: hash.paused_message || undefined,
		transactional: hash.transactional === '1',
		whenCapped: hash.when_capped === 'wait' ? 'wait' : 'skip',
		counts: Object.fromEntries(OUTCOMES.map((outcome) => [outcome, number(counterField(outcome))])) as Record<
			Outcome,
			number
		>,
		holds: number('holds'),
		retries: number('retries'),
		window: hash.window ? decodeWindow(hash.window) : undefined,
		zones: hash.zones ? (JSON.parse(hash.zones) as ZoneTable) : undefined,
		endAt: hash.end_at ? number('end_at') : undefined,
		clockOffset: number('clock_offset'),
		abTest: abTestOf(hash),
		budgetNextAt: hash.budget_next_at ? number('budget_next_at') : undefined,
		delivery: {
			delivered: number('t_delivered'),
			read: number('t_read'),
			failed: number('t_failed'),
			reasons: Object.entries(hash)
				.filter(([key, value]) => key.startsWith('t_fr:') && Number(value) > 0)
				.map(([key, value]) => ({ reason: key.slice('t_fr:'.length), count: Number(value) }))
				.sort((a, b) => b.count - a.count),
			settled: Boolean(hash.t_settled),
			mode: (hash.t_mode as TrackingMode | undefined) || undefined,
		},
	};
}

const share = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 1000) / 1000 : 0);

/**
 * The campaign's funnel from its record, the replies counted and the tracking mode (the one its
 * tracking started with, else what this process would use).
 */
function funnelOf(campaign: CampaignRecord, replied: number, mode: TrackingMode): CampaignFunnel {
	const { delivered, read, failed, reasons, settled } = campaign.delivery;
	const sent = campaign.counts.sent;
	return {
		audience: campaign.total,
		accepted: campaign.total - campaign.counts.rejected - campaign.counts.suppressed,
		sent,
		delivered,
		read,
		replied,
		failed_delivery: failed,
		in_flight: Math.max(0, sent - delivered - failed),
		failed_reasons: reasons,
		rates: {
			delivered: share(delivered, sent),
			read: share(read, sent),
			replied: share(replied, sent),
			failed_delivery: share(failed, sent),
		},
		tracking: campaign.delivery.mode ?? mode,
		settled,
	};
}

/**
 * Funnels added together (a cron schedule's campaigns): counts summed, rates of the sums, settled when every one is.
 */
function sumFunnels(funnels: CampaignFunnel[], mode: TrackingMode): CampaignFunnel {
	const stages = [
		'audience',
		'accepted',
		'sent',
		'delivered',
		'read',
		'replied',
		'failed_delivery',
		'in_flight',
	] as const;
	const sum = Object.fromEntries(
		stages.map((stage) => [stage, funnels.reduce((total, funnel) => total + funnel[stage], 0)]),
	) as Record<(typeof stages)[number], number>;
	const reasons = new Map<string, number>();
	for (const funnel of funnels)
		for (const { reason, count } of funnel.failed_reasons) reasons.set(reason, (reasons.get(reason) ?? 0) + count);
	return {
		...sum,
		failed_reasons: [...reasons].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count),
		rates: {
			delivered: share(sum.delivered, sum.sent),
			read: share(sum.read, sum.sent),
			replied: share(sum.replied, sum.sent),
			failed_delivery: share(sum.failed_delivery, sum.sent),
		},
		tracking: funnels[0]?.tracking ?? mode,
		settled: funnels.every((funnel) => funnel.settled),
	};
}

/** The campaigns a cron schedule made, newest first (each one's id starts with the schedule's). */
export async function scheduleCampaigns(
	context: RunnerContext,
	scheduleId: string,
	allIds?: string[],
): Promise<CampaignRecord[]> {
	// `allIds`: every campaign id, newest first, when the caller read them once for several schedules.
	const ids = (allIds ?? (await context.redis.zrevrange(context.keys.campaigns, 0, -1))).filter((id) =>
		id.startsWith(`${scheduleId}r`),
	);
	const campaigns: CampaignRecord[] = [];
	for (const id of ids) {
		const campaign = await findCampaign(context, id);
		if (campaign?.scheduleId === scheduleId) campaigns.push(campaign);
	}
	return campaigns;
}

/** The funnel across some campaigns (a cron schedule's): their funnels summed. */
export async function funnelAcross(context: RunnerContext, campaigns: CampaignRecord[]): Promise<CampaignFunnel> {
	const funnels: CampaignFunnel[] = [];
	for (const campaign of campaigns) funnels.push(await campaignFunnel(context, campaign));
	return sumFunnels(funnels, trackingMode(context.config));
}

export async function campaignFunnel(context: RunnerContext, campaign: CampaignRecord): Promise<CampaignFunnel> {
	return funnelOf(campaign, await repliedCount(context, campaign), trackingMode(context.config));
}

/**
 * Keeps the template's name the service gave in a send's answer (B8 names it; nothing else does), so
 * the campaign shows a name beside its template id. The first name stays; the hash must exist.
 */
export async function noteTemplateName(context: RunnerContext, from: string, id: string, name: string): Promise<void> {
	await redisScript(context.redis, 'noteTemplateName')([context.keys.campaign(from, id)], [name]);
}

export async function findCampaign(context: RunnerContext, id: string): Promise<CampaignRecord | undefined> {
	const number = await campaignNumber(context, id);
	if (number === undefined) return undefined;
	const hash = await context.redis.hgetall(context.keys.campaign(number, id));
	return hash.id ? recordFromHash(hash) : undefined;
}

export async function getCampaign(context: RunnerContext, id: string): Promise<CampaignRecord> {
	const found = await findCampaign(context, id);
	if (!found) throw new NotFoundError(`No campaign with id ${id}`);
	return found;
}

/**
 * Sends per second over the full seconds before now: the last 10, or fewer while the campaign has
 * been running for less. Counted from when it last became running, so the seconds it sat paused do
 * not pull the rate down (and the ETA up) for 10 s after a resume.
 */
async function currentRate(context: RunnerContext, campaign: CampaignRecord): Promise<number> {
	const second = Math.floor(Date.now() / 1000);
	const started = Math.floor((campaign.runningSince ?? campaign.startAt ?? campaign.createdAt) / 1000);
	const span = Math.min(10, Math.max(1, second - started));
	const fields = Array.from({ length: span }, (_, i) => String(second - 1 - i));
	const values = await context.redis.hmget(context.keys.ticks(campaign.from, campaign.id), ...fields);
	return values.reduce((sum, value) => sum + Number(value ?? 0), 0) / span;
}

export async function campaignStatus(context: RunnerContext, id: string): Promise<CampaignStatus> {
	return statusOf(context, await getCampaign(context, id));
}

/** The status of a campaign record already read (only the rate needs another look at Redis). */
export async function statusOf(context: RunnerContext, campaign: CampaignRecord): Promise<CampaignStatus> {
	return {
		...statusWithRate(campaign, campaign.state === 'running' ? await currentRate(context, campaign) : 0),
		funnel: await campaignFunnel(context, campaign),
		...(campaign.abTest ? { ab_test: await abTestView(context, campaign, campaign.abTest) } : {}),
	};
}

export function statusWithRate(campaign: CampaignRecord, rate: number): CampaignStatus {
	const open = campaign.counts.pending + campaign.counts.claimed;
	return {
		id: campaign.id,
		name: campaign.name,
		state: campaign.state,
		counts: campaign.counts,
		rate,
		eta_seconds: open === 0 ? 0 : rate > 0 ? Math.ceil(open / rate) : null,
		last_error: campaign.lastError ?? null,
		paused_reason: campaign.state === 'paused' ? (campaign.pausedReason ?? null) : null,
		paused_message: campaign.state === 'paused' ? (campaign.pausedMessage ?? null) : null,
		start_at: isoOrNull(campaign.startAt),
		waiting: waitingOf(campaign),
	};
}

/** A running campaign waiting for the daily messaging limit, as its status says it. */
function waitingOf(campaign: CampaignRecord): CampaignStatus['waiting'] {
	if (campaign.state !== 'running' || campaign.budgetNextAt === undefined) return null;
	const next_at = new Date(campaign.budgetNextAt).toISOString();
	return {
		reason: 'daily_limit',
		next_at,
		message: `waiting for the daily limit: the next customer can be counted at ${next_at}`,
	};
}

/** GET /api/campaigns/:id, each item of the list and the data of campaign events: the status plus the settings. */
export type CampaignDetail = ReturnType<typeof campaignDetail>;

export function campaignDetail(campaign: CampaignRecord, status: CampaignStatus) {
	return {
		...status,
		template_id: campaign.templateId,
		template_name: campaign.templateName ?? null,
		from: campaign.from,
		agent_id: campaign.agentId ?? null,
		rate_limit: campaign.rate,
		transactional: campaign.transactional,
		when_capped: campaign.whenCapped,
		total: campaign.total,
		source: campaign.source,
		created_at: new Date(campaign.createdAt).toISOString(),
		finished_at: isoOrNull(campaign.finishedAt),
		// A send window and an end (audience/windows.ts), when it has them.
		...(campaign.window
			? {
					window: describeWindow(campaign.window),
					zones: (campaign.zones ?? []).map(([zone, recipients]) => ({ zone, recipients })),
				}
			: {}),
		...(campaign.endAt !== undefined ? { end_at: new Date(campaign.endAt).toISOString() } : {}),
		// An event's status (no walk of the test at hand): the test as decided, with the figures it was decided on.
		...(campaign.abTest && !status.ab_test ? { ab_test: abTestSummary(campaign.abTest) } : {}),
	};
}

/**
 * Details of these ids (what a list shows: name, created time, template, number, counts, state); a
 * draft that expired a moment ago (its id still listed) is left out.
 */
export async function detailsOf(context: RunnerContext, ids: string[]): Promise<CampaignDetail[]> {
	const found = await Promise.all(ids.map((id) => findCampaign(context, id)));
	return Promise.all(
		found
			.filter((campaign): campaign is CampaignRecord => campaign !== undefined)
			.map(async (campaign) => campaignDetail(campaign, await statusOf(context, campaign))),
	);
}

/** Statuses read per round when every campaign is listed: memory stays bounded by a page, not the list. */
const LIST_PAGE = 500;

/**
 * Every campaign, newest first. The ids are read once, so a campaign created meanwhile neither
 * shifts a page nor appears twice; their statuses are read a page at a time.
 */
export async function listCampaigns(context: RunnerContext): Promise<CampaignDetail[]> {
	const ids = await context.redis.zrevrange(context.keys.campaigns, 0, -1);
	const details: CampaignDetail[] = [];
	for (let start = 0; start < ids.length; start += LIST_PAGE)
		details.push(...(await detailsOf(context, ids.slice(start, start + LIST_PAGE))));
	return details;
}

/** A campaign's figures for GET /metrics: its status with its number and the counters kept on the record. */
export interface CampaignFigures {
	status: CampaignStatus;
	from: string;
	holds: number;
	retries: number;
}

/** Ids of every running campaign: each number keeps its own set (keys.ts), read one number at a time. */
async function runningCampaigns(context: RunnerContext): Promise<string[]> {
	const { redis, keys } = context;
	const ids: string[] = [];
	for (const from of await redis.smembers(keys.numbers)) ids.push(...(await redis.smembers(keys.running(from))));
	return ids;
}

/**
 * What a metrics scrape reports: how many campaigns run, and the
 * figures of every running one and the `recent` newest others.
 */
export async function campaignFigures(
	context: RunnerContext,
	recent: number,
): Promise<{ running: number; campaigns: CampaignFigures[] }> {
	const { redis, keys } = context;
	const runningIds = await runningCampaigns(context);
	const ids = new Set([...runningIds, ...(await redis.zrevrange(keys.campaigns, 0, recent - 1))]);
	const running = runningIds.length;
	const campaigns: CampaignFigures[] = [];
	for (const id of ids) {
		const campaign = await findCampaign(context, id);
		if (!campaign) continue;
		campaigns.push({
			status: await statusOf(context, campaign),
			from: campaign.from,
			holds: campaign.holds,
			retries: campaign.retries,
		});
	}
	return { running, campaigns };
}

/** Sends settled per second over the last `seconds` (at most 600), oldest first: the console's chart. */
export async function rateHistory(context: RunnerContext, id: string, seconds = 600): Promise<Array<[number, number]>> {
	const now = Math.floor(Date.now() / 1000);
	const span = Math.min(600, seconds);
	const fields = Array.from({ length: span }, (_, i) => String(now - span + i));
	const number = await campaignNumber(context, id);
	const values =
		number === undefined
			? fields.map(() => null)
			: await context.redis.hmget(context.keys.ticks(number, id), ...fields);
	return fields.map((second, i) => [Number(second), Number(values[i] ?? 0)]);
}
