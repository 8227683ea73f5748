/**
 * What campaign and reindex cron schedules share: the rule of their settings (a time zone goes with
 * a pattern), their place among the schedules of their kind (at most RUNNER_MAX_*_SCHEDULES), and
 * the BullMQ job scheduler that queues each run. BullMQ checks the pattern and the zone when the
 * scheduler is upserted, so an invalid one is refused there, named as the client names the setting.
 */
import type { Queue } from 'bullmq';

import { FieldError, type RunnerContext } from './context';
import { fullMessage, LimitError, release, reserve } from './limits';

/** How a client names the two settings: `--cron`/`--tz` or `cron`/`tz`. */
export interface CronNames {
	cron: string;
	tz: string;
}

export function checkCronSettings(given: { cron?: string; tz?: string }, names: CronNames): void {
	if (given.tz && !given.cron) throw new FieldError(`${names.tz} goes with ${names.cron}`, names.tz);
}

/** The schedules of one kind: their sorted set, how many may exist, and how a full set is explained. */
export interface ScheduleKind {
	queue: Queue;
	list: string;
	max: number;
	/** `campaign schedules`, as a full-set message says it. */
	what: string;
	/** The setting that raises `max`. */
	maxSetting: string;
}

/**
 * Takes the schedule's place in its kind's list (counted and taken in one step), then upserts its
 * job scheduler; a pattern or zone BullMQ refuses gives the place back.
 */
export async function startCronSchedule(
	context: RunnerContext,
	kind: ScheduleKind,
	schedule: { id: string; cron: string; tz: string; createdAt: number },
	scheduler: { id: string; job: string; data: Record<string, string> },
	names: CronNames,
): Promise<void> {
	const full = await reserve(context, kind.list, kind.max, schedule.id, schedule.createdAt);
	if (full !== undefined) throw new LimitError(409, fullMessage(kind.what, full, kind.max, kind.maxSetting), 'cron');
	try {
		await kind.queue.upsertJobScheduler(scheduler.id, { pattern: schedule.cron, tz: schedule.tz }, { name: scheduler.job, data: scheduler.data, opts: { removeOnComplete: true, removeOnFail: 50 } });
	} catch (error) {
		await release(context, kind.list, schedule.id);
		throw new FieldError(`${names.cron} "${schedule.cron}" with ${names.tz} "${schedule.tz}" is not a valid schedule: ${(error as Error).message}`, names.cron);
	}
}

/** Stops the job scheduler and forgets the schedule; the runs it made stay. */
export async function stopCronSchedule(context: RunnerContext, kind: ScheduleKind, schedule: { id: string; record: string }, schedulerId: string): Promise<void> {
	await kind.queue.removeJobScheduler(schedulerId);
	await context.redis.del(schedule.record);
	await context.redis.zrem(kind.list, schedule.id);
}
