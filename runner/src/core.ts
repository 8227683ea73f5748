/**
 * The runner's core library: what every client (the CLI now; the HTTP API, the console and the
 * Convo node's Campaign resource later) calls to create, control and report campaigns. No rule is
 * written in a client.
 */
import { createHash } from 'node:crypto';

import { ConflictError, UserError, type RunnerContext } from './context';
import type { SourceRecord } from './source';
import { checkUrlAllowed } from './net/outbound';
import { SealError, storedSource } from './net/urls';
import { snapshotCampaign, type Snapshot } from './campaigns/create';
import { CLI_NAMES, campaignSettings, settingsError, type CampaignSettings, type SettingNames } from './campaigns/schema';
import { createSchedule, findSchedule, listSchedules, removeSchedule, scheduleView, type ScheduleRecord } from './campaigns/schedule';
import { campaignDetail, campaignStatus, getCampaign, listCampaigns, newCampaignId, statusOf } from './campaigns/store';
import { cancelCampaign, pauseCampaign, queueScheduledStart, resumeCampaign, retryNotSent, setCampaignRate } from './campaigns/control';
import { DRAFT_LIFETIME_MS, giveBackDraftPlace, startDraft, takeDraftPlace } from './campaigns/draft';

export { campaignStatus, listCampaigns, pauseCampaign, resumeCampaign, retryNotSent, setCampaignRate, listSchedules };
export { addRecipients, type ChunkAnswer } from './campaigns/draft';
export { reconcileCampaign } from './campaigns/reconcile';
export { errorBreakdown, reportRows, reportText } from './campaigns/report';
export { rateHistory, getCampaign } from './campaigns/store';

// Webhooks: registrations and the events delivered to them (webhooks/).
export { createWebhook, enableWebhook, getWebhook, listWebhooks, pageWebhooks, removeWebhook, type WebhookInput, type WebhookView } from './webhooks/store';

// Reindex runs: keep a search collection in sync with a feed (reindex/).
export { createReindex, DEFAULT_REINDEX_RATE, listReindexSchedules, removeReindexSchedule, type ReindexAnswer, type ReindexInput } from './reindex/create';
export { listRuns as listReindexRuns, runOverview as reindexOverview, runStatus as reindexStatus, statusOf as reindexStatusOf, type RunOverview as ReindexOverview, type RunStatus as ReindexStatus } from './reindex/store';
export { reindexReport } from './reindex/report';

export type CreateAnswer = (Snapshot & { kind: 'campaign' }) | { kind: 'schedule'; schedule: Omit<ScheduleRecord, 'sealedSource'> };

/** The settings of a create, checked; each error names the setting as the client calls it. */
function checkedSettings(context: RunnerContext, input: CampaignSettings, names: SettingNames) {
	const parsed = campaignSettings.safeParse(input);
	if (!parsed.success) throw new UserError(settingsError(parsed.error, names));
	const settings = parsed.data;
	if (settings.cron && settings.at) throw new UserError(`${names.at} and ${names.cron} exclude each other: ${names.at} runs once, ${names.cron} repeats`);
	if (settings.tz && !settings.cron) throw new UserError(`${names.tz} goes with ${names.cron}`);
	const rate = settings.rate ?? context.config.RUNNER_DEFAULT_RATE;
	const common = { templateId: settings.templateId, from: settings.from, agentId: settings.agentId, rate, source: settings.source, format: settings.format };
	return { settings, common };
}

/** `records`: rows already at hand (an upload, inline rows); `input.source` then only names them. */
export async function createCampaign(context: RunnerContext, input: CampaignSettings, records?: AsyncIterable<SourceRecord>, names: SettingNames = CLI_NAMES): Promise<CreateAnswer> {
	const { settings, common } = checkedSettings(context, input, names);

	if (settings.cron && records) throw new UserError('a cron schedule re-reads its recipients at each run: give a file path or a URL, not rows');
	if (!records) await checkUrlAllowed(context.config, common.source, names.source);
	if (settings.cron) {
		let stored;
		try {
			stored = storedSource(context.config, common.source, names.source);
		} catch (error) {
			throw error instanceof SealError ? new UserError(error.message) : error;
		}
		const schedule = await createSchedule(context, { ...common, source: stored.source, sealedSource: stored.sealed, cron: settings.cron, tz: settings.tz ?? 'UTC' });
		context.log.info({ schedule: schedule.id, cron: schedule.cron, tz: schedule.tz }, 'campaign schedule created');
		return { kind: 'schedule', schedule: scheduleView(schedule) };
	}

	const id = newCampaignId();
	const startAt = settings.at ? Date.parse(settings.at) : undefined;
	const snapshot = await snapshotCampaign(context, { ...common, id, state: startAt ? 'scheduled' : 'running', startAt, records });
	if (startAt && snapshot.state === 'scheduled') await queueScheduledStart(context, id, startAt);
	context.log.info({ campaign: id, state: snapshot.state, recipients: snapshot.accepted, rejected: snapshot.rejected }, 'campaign created');
	return { kind: 'campaign', ...snapshot };
}

/**
 * A draft: a campaign created with the settings and the rows given so far (maybe none), filled
 * by addRecipients a chunk at a time and sent only once startCampaign is called. Never started,
 * it is removed after 24 h.
 */
export async function createDraft(context: RunnerContext, input: CampaignSettings, records?: AsyncIterable<SourceRecord>, names: SettingNames = CLI_NAMES): Promise<Snapshot & { kind: 'campaign' }> {
	const { settings, common } = checkedSettings(context, input, names);
	if (settings.cron) throw new UserError(`${names.cron} does not go with a draft: a draft is one campaign, started once`);
	if (!records) await checkUrlAllowed(context.config, common.source, names.source);
	const id = newCampaignId();
	const startAt = settings.at ? Date.parse(settings.at) : undefined;
	const draft = { startsAs: startAt ? ('scheduled' as const) : ('running' as const), expiresAt: Date.now() + DRAFT_LIFETIME_MS };
	await takeDraftPlace(context, id, draft.expiresAt);
	let snapshot: Snapshot;
	try {
		snapshot = await snapshotCampaign(context, { ...common, id, state: 'draft', startAt, records: records ?? (async function* () {})(), draft });
	} catch (error) {
		await giveBackDraftPlace(context, id).catch(() => undefined);
		throw error;
	}
	context.log.info({ campaign: id, recipients: snapshot.accepted, rejected: snapshot.rejected }, 'draft campaign created');
	return { kind: 'campaign', ...snapshot };
}

/**
 * Starts a draft (running, or scheduled when it has a start time); a campaign that is no longer a
 * draft is left alone, so a retried call is harmless. Answers the campaign as GET shows it.
 */
export async function startCampaign(context: RunnerContext, id: string) {
	await startDraft(context, id);
	return campaignView(context, id);
}

/** A campaign's status and settings: GET /api/campaigns/:id. */
export async function campaignView(context: RunnerContext, id: string) {
	const campaign = await getCampaign(context, id);
	return campaignDetail(campaign, await statusOf(context, campaign));
}

/** Cancel a campaign, or stop a cron schedule (its past runs stay). */
export async function cancel(context: RunnerContext, id: string) {
	if (await findSchedule(context, id)) {
		await removeSchedule(context, id);
		return { id, state: 'cancelled' as const, schedule: true, cancelled: 0 };
	}
	return { id, ...(await cancelCampaign(context, id)) };
}

const IDEMPOTENCY_SECONDS = 24 * 3600;

/**
 * Does `work` once per `key` within 24 h and keeps its answer: a client that retries (an n8n
 * execution run again) gets the first answer back instead of a second campaign or a chunk added
 * twice. `scope` keeps keys of different requests apart (a chunk's key is scoped to its campaign);
 * the create's scope is empty. A key whose first request is still running is a conflict; one
 * whose request failed is forgotten, so the retry runs.
 */
export async function once<T extends object>(context: RunnerContext, scope: string, key: string, work: () => Promise<T>): Promise<T & { replayed: boolean }> {
	const slot = context.keys.idempotency(createHash('sha256').update(scope === '' ? key : `${scope}\n${key}`).digest('hex'));
	if ((await context.redis.set(slot, 'creating', 'EX', IDEMPOTENCY_SECONDS, 'NX')) !== 'OK') {
		const existing = await context.redis.get(slot);
		if (existing === 'creating' || existing === null) throw new ConflictError('a request with this Idempotency-Key is still in progress; ask again in a moment');
		return { ...(JSON.parse(existing) as T), replayed: true };
	}
	try {
		const answer = await work();
		await context.redis.set(slot, JSON.stringify(answer), 'EX', IDEMPOTENCY_SECONDS);
		return { ...answer, replayed: false };
	} catch (error) {
		await context.redis.del(slot);
		throw error;
	}
}

/** Create once per `key` within 24 h (see once). */
export function createCampaignOnce(context: RunnerContext, key: string, input: CampaignSettings, records?: AsyncIterable<SourceRecord>, names: SettingNames = CLI_NAMES): Promise<CreateAnswer & { replayed: boolean }> {
	return once(context, '', key, () => createCampaign(context, input, records, names));
}
