/**
 * Scheduled campaigns. `--at`: the campaign is snapshotted at create and a delayed control job
 * starts it. `--cron`: a schedule record plus  a BullMQ job scheduler in that time zone; each firing
 * re-reads the source into a campaign of its own, whose id is derived from the schedule and the
 * due time, so a firing delivered twice creates one campaign (the Chatwoot duplicate).
 */
import type { RunnerContext } from '../context';
import { ConflictError, UserError } from '../errors';
import {
	dropOrphanScheduler,
	findCronSchedule,
	cronScheduleFields,
	listCronSchedules,
	pauseCronSchedule,
	resumeCronSchedule,
	startCronSchedule,
	stopCronSchedule,
	type CronNames,
	type CronSchedule,
	type ScheduleKind,
} from '../cronSchedules';
import { CAMPAIGN_CRON } from '../jobs';
import { newId } from '../keys';
import { SealError, sourceToRead } from '../net/urls';
import { emitBornFinished, listOrLeave, snapshotCampaign } from './create';
import { registerCampaign } from '../keyGroups';
import type { CampaignBasics } from './schema';
import { findCampaign } from './store';
import { defaultCampaignName } from './names';

export interface ScheduleRecord extends CampaignBasics, CronSchedule {
	/** The whole source URL, sealed (net/urls.ts), when `source` shows only its origin and path. */
	sealedSource?: string;
}

/**
 * A schedule as answers and lists show it: its settings named as a campaign's own are (snake_case,
 * times in ISO 8601), `state` and `next_run_at` (null while paused, or when its pattern names no
 * time left); never the sealed URL. A repeat is refused the settings of one time only (its local
 * hours, an end, an A/B test: core/campaigns.ts checkedSettings), so it has none of them.
 */
export function scheduleView(schedule: ScheduleRecord) {
	const { id, cron, tz, state, next_run_at, created_at, paused_at } = cronScheduleFields(schedule);
	return {
		id,
		// A schedule stored before names has its source's, as its firings do.
		name: schedule.name || defaultCampaignName(schedule.source, schedule.createdAt),
		cron,
		tz,
		state,
		next_run_at,
		template_id: schedule.templateId,
		from: schedule.from,
		agent_id: schedule.agentId ?? null,
		rate_limit: schedule.rate,
		source: schedule.source,
		format: schedule.format ?? null,
		delimiter: schedule.delimiter ?? null,
		transactional: schedule.transactional === true,
		when_capped: schedule.whenCapped === 'wait' ? ('wait' as const) : ('skip' as const),
		created_at,
		paused_at,
	};
}

export type ScheduleView = ReturnType<typeof scheduleView>;

function campaignSchedules(context: RunnerContext): ScheduleKind {
	return {
		jobs: CAMPAIGN_CRON,
		list: context.keys.schedules,
		record: (id) => context.keys.schedule(id),
		max: context.config.RUNNER_MAX_CAMPAIGN_SCHEDULES,
		what: 'campaign schedules',
		maxSetting: 'RUNNER_MAX_CAMPAIGN_SCHEDULES',
	};
}

export async function createSchedule(
	context: RunnerContext,
	record: Omit<ScheduleRecord, 'id' | 'createdAt'>,
	names: CronNames,
): Promise<ScheduleRecord> {
	const schedule: ScheduleRecord = { ...record, id: newId('s'), createdAt: Date.now() };
	await startCronSchedule(context, campaignSchedules(context), schedule, names);
	return schedule;
}

export function findSchedule(context: RunnerContext, id: string): Promise<ScheduleRecord | undefined> {
	return findCronSchedule<ScheduleRecord>(context, campaignSchedules(context), id);
}

export function listSchedules(context: RunnerContext): Promise<ScheduleRecord[]> {
	return listCronSchedules<ScheduleRecord>(context, campaignSchedules(context));
}

/** Pauses a schedule: it fires nothing until resumed. Undefined when there is no such schedule. */
export function pauseSchedule(context: RunnerContext, id: string): Promise<ScheduleRecord | undefined> {
	return pauseCronSchedule<ScheduleRecord>(context, campaignSchedules(context), id);
}

/** Resumes a paused schedule from its next time on. Undefined when there is no such schedule. */
export function resumeSchedule(context: RunnerContext, id: string): Promise<ScheduleRecord | undefined> {
	return resumeCronSchedule<ScheduleRecord>(context, campaignSchedules(context), id);
}

export async function removeSchedule(context: RunnerContext, id: string): Promise<void> {
	await stopCronSchedule(context, campaignSchedules(context), id);
}

/**
 * One firing of a schedule, due at `dueAt` (the cron job's processor, jobs.ts): a campaign of its
 * own, or a skipped one recorded with its reason; nothing for a schedule removed or paused.
 */
export async function fireSchedule(
	context: RunnerContext,
	scheduleId: string,
	dueAt: number,
): Promise<string | undefined> {
	const schedule = await findSchedule(context, scheduleId);
	if (!schedule) {
		await dropOrphanScheduler(context, campaignSchedules(context), scheduleId);
		return undefined;
	}
	// Paused: a firing queued before its job scheduler went makes nothing.
	if (schedule.pausedAt !== undefined) return undefined;
	const id = `${scheduleId}r${dueAt.toString(36)}`;
	if (await findCampaign(context, id)) return id;
	const late = Date.now() - dueAt;
	const { templateId, from, agentId, rate, format, delimiter, transactional, whenCapped } = schedule;
	// Each firing's campaign carries its schedule's name (a schedule stored before names: its source's).
	const name = schedule.name || defaultCampaignName(schedule.source, schedule.createdAt);
	if (late > context.config.RUNNER_MAX_LATENESS) {
		await recordUnsentFiring(
			context,
			id,
			{ ...schedule, name },
			'cancelled',
			`skipped: the firing due at ${new Date(dueAt).toISOString()} ` +
				`was taken up ${Math.round(late / 1000)} s late (limit ${context.config.RUNNER_MAX_LATENESS / 1000} s)`,
		);
		return id;
	}
	try {
		const source = sourceToRead(context.config, { source: schedule.source, sealed: schedule.sealedSource });
		const snapshot = await snapshotCampaign(context, {
			id,
			name,
			templateId,
			from,
			agentId,
			rate,
			source,
			format,
			delimiter,
			transactional,
			whenCapped,
			scheduleId,
			state: 'running',
		});
		context.log.info(
			{ schedule: scheduleId, campaign: id, recipients: snapshot.accepted, rejected: snapshot.rejected },
			'schedule fired: its campaign started',
		);
	} catch (error) {
		// The same firing delivered twice at once: the other one made the campaign.
		if (error instanceof ConflictError) return id;
		if (!(error instanceof UserError || error instanceof SealError)) throw error;
		await recordUnsentFiring(context, id, { ...schedule, name }, 'failed', error.message);
		context.log.error(
			{ schedule: scheduleId, campaign: id, reason: error.message },
			'schedule fired but could not read its recipients',
		);
	}
	return id;
}

/** A firing that sent nothing (skipped, or its source unreadable) is still listed as a campaign, with its reason. */
async function recordUnsentFiring(
	context: RunnerContext,
	id: string,
	schedule: ScheduleRecord,
	state: 'cancelled' | 'failed',
	reason: string,
): Promise<void> {
	const { redis, keys } = context;
	const { from } = schedule;
	const now = Date.now();
	// The three steps of keyGroups.ts: registered, written with its entry in `unlisted`, then listed.
	await registerCampaign(context, id, from);
	await redis
		.multi()
		.hset(keys.campaign(from, id), {
			id,
			name: schedule.name,
			state,
			template_id: schedule.templateId,
			from,
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
		})
		.zadd(keys.unlisted(from), now, id)
		.exec();
	await emitBornFinished(context, from, id);
	await listOrLeave(context, from, id, now);
}
