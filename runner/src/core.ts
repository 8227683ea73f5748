/**
 * The runner's core library: what every client (the CLI now; the HTTP API, the console and the
 * Convo node's Campaign resource later) calls to create, control and report campaigns. No rule is
 * written in a client.
 */
import { createHash } from 'node:crypto';

import { ConflictError, UserError, type RunnerContext } from './context';
import type { SourceRecord } from './source';
import { snapshotCampaign, type Snapshot } from './campaigns/create';
import { CLI_NAMES, campaignSettings, settingsError, type CampaignSettings, type SettingNames } from './campaigns/schema';
import { createSchedule, findSchedule, listSchedules, removeSchedule, type ScheduleRecord } from './campaigns/schedule';
import { campaignStatus, listCampaigns, newCampaignId } from './campaigns/store';
import { cancelCampaign, pauseCampaign, resumeCampaign, retryNotSent, setCampaignRate } from './campaigns/control';

export { campaignStatus, listCampaigns, pauseCampaign, resumeCampaign, retryNotSent, setCampaignRate, listSchedules };
export { reconcileCampaign } from './campaigns/reconcile';
export { errorBreakdown, reportRows, reportText } from './campaigns/report';
export { rateHistory, getCampaign } from './campaigns/store';

// Reindex runs: keep a search collection in sync with a feed (reindex/).
export { createReindex, DEFAULT_REINDEX_RATE, listReindexSchedules, removeReindexSchedule, type ReindexAnswer, type ReindexInput } from './reindex/create';
export { listRuns as listReindexRuns, runOverview as reindexOverview, runStatus as reindexStatus, statusOf as reindexStatusOf, type RunOverview as ReindexOverview, type RunStatus as ReindexStatus } from './reindex/store';
export { reindexReport } from './reindex/report';

export type CreateAnswer = (Snapshot & { kind: 'campaign' }) | { kind: 'schedule'; schedule: ScheduleRecord };

/** `records`: rows already at hand (an upload, inline rows); `input.source` then only names them. */
export async function createCampaign(context: RunnerContext, input: CampaignSettings, records?: AsyncIterable<SourceRecord>, names: SettingNames = CLI_NAMES): Promise<CreateAnswer> {
	const parsed = campaignSettings.safeParse(input);
	if (!parsed.success) throw new UserError(settingsError(parsed.error, names));
	const settings = parsed.data;
	if (settings.cron && settings.at) throw new UserError(`${names.at} and ${names.cron} exclude each other: ${names.at} runs once, ${names.cron} repeats`);
	if (settings.tz && !settings.cron) throw new UserError(`${names.tz} goes with ${names.cron}`);
	const rate = settings.rate ?? context.config.RUNNER_DEFAULT_RATE;
	const common = { templateId: settings.templateId, from: settings.from, agentId: settings.agentId, rate, source: settings.source, format: settings.format };

	if (settings.cron && records) throw new UserError('a cron schedule re-reads its recipients at each run: give a file path or a URL, not rows');
	if (settings.cron) {
		const schedule = await createSchedule(context, { ...common, cron: settings.cron, tz: settings.tz ?? 'UTC' });
		context.log.info({ schedule: schedule.id, cron: schedule.cron, tz: schedule.tz }, 'campaign schedule created');
		return { kind: 'schedule', schedule };
	}

	const id = newCampaignId();
	const startAt = settings.at ? Date.parse(settings.at) : undefined;
	const snapshot = await snapshotCampaign(context, { ...common, id, state: startAt ? 'scheduled' : 'running', startAt, records });
	if (startAt && snapshot.state === 'scheduled') {
		await context.queues.control.add('start', { campaign: id, dueAt: startAt }, { jobId: `start-${id}`, delay: Math.max(0, startAt - Date.now()), removeOnComplete: true, removeOnFail: 50 });
	}
	context.log.info({ campaign: id, state: snapshot.state, recipients: snapshot.accepted, rejected: snapshot.rejected }, 'campaign created');
	return { kind: 'campaign', ...snapshot };
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
 * Create once per `key` within 24 h: a client that retries (an n8n execution run again) gets the
 * first campaign back instead of a second one. A key still being created is a conflict.
 */
export async function createCampaignOnce(context: RunnerContext, key: string, input: CampaignSettings, records?: AsyncIterable<SourceRecord>, names: SettingNames = CLI_NAMES): Promise<CreateAnswer & { replayed: boolean }> {
	const slot = context.keys.idempotency(createHash('sha256').update(key).digest('hex'));
	if ((await context.redis.set(slot, 'creating', 'EX', IDEMPOTENCY_SECONDS, 'NX')) !== 'OK') {
		const existing = await context.redis.get(slot);
		if (existing === 'creating' || existing === null) throw new ConflictError('a create with this Idempotency-Key is still in progress; ask again in a moment');
		return { ...(JSON.parse(existing) as CreateAnswer), replayed: true };
	}
	try {
		const answer = await createCampaign(context, input, records, names);
		await context.redis.set(slot, JSON.stringify(answer), 'EX', IDEMPOTENCY_SECONDS);
		return { ...answer, replayed: false };
	} catch (error) {
		await context.redis.del(slot);
		throw error;
	}
}
