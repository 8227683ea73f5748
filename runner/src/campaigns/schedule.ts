/**
 * Scheduled campaigns. `--at`: the campaign is snapshotted at create and a delayed control job
 * starts it. `--cron`: a schedule record plus a BullMQ job scheduler in that time zone; each run
 * re-reads the source into a campaign of its own, whose id is derived from the schedule and the
 * due time, so a run delivered twice creates one campaign (the Chatwoot duplicate).
 */
import { ConflictError, UserError, type RunnerContext } from '../context';
import { startCronSchedule, stopCronSchedule, type CronNames, type ScheduleKind } from '../cronSchedules';
import { newId } from '../keys';
import { SealError, sourceToRead } from '../net/urls';
import { emitBornFinished, snapshotCampaign } from './create';
import type { CampaignBasics } from './schema';
import { findCampaign } from './store';

export interface ScheduleRecord extends CampaignBasics {
	id: string;
	cron: string;
	tz: string;
	createdAt: number;
	/** The whole source URL, sealed (net/urls.ts), when `source` shows only its origin and path. */
	sealedSource?: string;
}

/** A schedule as answers and lists show it: without the sealed URL. */
export function scheduleView({ sealedSource: _sealed, ...shown }: ScheduleRecord): Omit<ScheduleRecord, 'sealedSource'> {
	return shown;
}

const cronSchedulerId = (scheduleId: string) => `cron-${scheduleId}`;

function campaignSchedules(context: RunnerContext): ScheduleKind {
	return { queue: context.queues.control, list: context.keys.schedules, max: context.config.RUNNER_MAX_CAMPAIGN_SCHEDULES, what: 'campaign schedules', maxSetting: 'RUNNER_MAX_CAMPAIGN_SCHEDULES' };
}

export async function createSchedule(context: RunnerContext, record: Omit<ScheduleRecord, 'id' | 'createdAt'>, names: CronNames): Promise<ScheduleRecord> {
	const id = newId('s');
	const schedule: ScheduleRecord = { ...record, id, createdAt: Date.now() };
	await startCronSchedule(context, campaignSchedules(context), schedule, { id: cronSchedulerId(id), job: 'cron', data: { schedule: id } }, names);
	await context.redis.set(context.keys.schedule(id), JSON.stringify(schedule));
	return schedule;
}

export async function findSchedule(context: RunnerContext, id: string): Promise<ScheduleRecord | undefined> {
	const text = await context.redis.get(context.keys.schedule(id));
	return text ? (JSON.parse(text) as ScheduleRecord) : undefined;
}

export async function listSchedules(context: RunnerContext): Promise<Array<Omit<ScheduleRecord, 'sealedSource'>>> {
	const ids = await context.redis.zrevrange(context.keys.schedules, 0, -1);
	const found = await Promise.all(ids.map((id) => findSchedule(context, id)));
	return found.filter((schedule): schedule is ScheduleRecord => schedule !== undefined).map(scheduleView);
}

export async function removeSchedule(context: RunnerContext, id: string): Promise<void> {
	await stopCronSchedule(context, campaignSchedules(context), { id, record: context.keys.schedule(id) }, cronSchedulerId(id));
}

/** One cron run, due at `dueAt`: a campaign of its own, or a skipped run recorded with its reason. */
export async function runSchedule(context: RunnerContext, scheduleId: string, dueAt: number): Promise<string | undefined> {
	const schedule = await findSchedule(context, scheduleId);
	if (!schedule) return undefined;
	const id = `${scheduleId}r${dueAt.toString(36)}`;
	if (await findCampaign(context, id)) return id;
	const late = Date.now() - dueAt;
	const { templateId, from, agentId, rate, format } = schedule;
	if (late > context.config.RUNNER_MAX_LATENESS) {
		await recordRun(context, id, schedule, 'cancelled', `skipped: the run due at ${new Date(dueAt).toISOString()} was taken up ${Math.round(late / 1000)} s late (limit ${context.config.RUNNER_MAX_LATENESS / 1000} s)`);
		return id;
	}
	try {
		const source = sourceToRead(context.config, { source: schedule.source, sealed: schedule.sealedSource });
		const snapshot = await snapshotCampaign(context, { id, templateId, from, agentId, rate, source, format, scheduleId, state: 'running' });
		context.log.info({ schedule: scheduleId, campaign: id, recipients: snapshot.accepted, rejected: snapshot.rejected }, 'scheduled run started');
	} catch (error) {
		// The same run delivered twice at once: the other one made the campaign.
		if (error instanceof ConflictError) return id;
		if (!(error instanceof UserError || error instanceof SealError)) throw error;
		await recordRun(context, id, schedule, 'failed', error.message);
		context.log.error({ schedule: scheduleId, campaign: id, reason: error.message }, 'scheduled run could not read its recipients');
	}
	return id;
}

/** A run that sent nothing (skipped, or its source unreadable) is still listed, with its reason. */
async function recordRun(context: RunnerContext, id: string, schedule: ScheduleRecord, state: 'cancelled' | 'failed', reason: string): Promise<void> {
	const now = Date.now();
	await context.redis.hset(context.keys.campaign(id), {
		id,
		state,
		template_id: schedule.templateId,
		from: schedule.from,
		agent_id: schedule.agentId ?? '',
		rate: schedule.rate,
		source: schedule.source,
		schedule_id: schedule.id,
		created_at: now,
		finished_at: now,
		total: 0,
		cursor: 0,
		last_progress_at: now,
		last_error: reason,
	});
	await context.redis.zadd(context.keys.campaigns, now, id);
	await emitBornFinished(context, id);
}
