/**
 * What campaign and reindex cron schedules share: the rule of their settings (a time zone goes with
 * a pattern, UTC when none is given), their place among the schedules of their kind (at most
 * RUNNER_MAX_*_SCHEDULES), their record (JSON, one key each), and the BullMQ job scheduler that
 * queues each firing (jobs.ts). BullMQ checks the pattern and the zone when the scheduler is upserted, so an
 * invalid one is refused there, named as the client names the setting.
 */
import { getNextMillis } from 'bullmq';

import type { RunnerContext } from './context';
import { FieldError } from './errors';
import type { CronJobs } from './jobs';
import { fullMessage, LimitError, release, reserve } from './limits';
import { isoOrNull } from './isoTime';

/** How a client names the two settings: `--cron`/`--tz` or `cron`/`tz`. */
export interface CronNames {
	cron: string;
	tz: string;
}

/** The schedule asked for, its zone UTC when none is given; undefined without a pattern (a zone alone is refused). */
export function cronSettings(
	given: { cron?: string; tz?: string },
	names: CronNames,
): { cron: string; tz: string } | undefined {
	if (given.tz && !given.cron) throw new FieldError(`${names.tz} goes with ${names.cron}`, names.tz);
	return given.cron ? { cron: given.cron, tz: given.tz ?? 'UTC' } : undefined;
}

/**
 * When a schedule would run next after `now`, read as BullMQ's job scheduler reads the pattern
 * (the same parser), so a pattern or zone it would refuse is refused here with the same words:
 * what a dry run, which upserts no scheduler, tells of a schedule.
 */
export function nextCronRun(schedule: { cron: string; tz: string }, names: CronNames, now = Date.now()): number {
	let next: number | undefined;
	try {
		next = getNextMillis(now, { pattern: schedule.cron, tz: schedule.tz });
	} catch (error) {
		throw new FieldError(
			`${names.cron} "${schedule.cron}" with ${names.tz} "${schedule.tz}" is not a valid schedule: ` +
				`${(error as Error).message}`,
			names.cron,
		);
	}
	if (next === undefined)
		throw new FieldError(`${names.cron} "${schedule.cron}" with ${names.tz} "${schedule.tz}" never runs`, names.cron);
	return next;
}

/** When a schedule fires next; null while it is paused, or when its pattern names no time left. */
function nextFiring(schedule: CronSchedule, now = Date.now()): number | null {
	if (schedule.pausedAt !== undefined) return null;
	try {
		return getNextMillis(now, { pattern: schedule.cron, tz: schedule.tz }) ?? null;
	} catch {
		return null;
	}
}

/**
 * What every schedule's answer holds (http/routes.ts cronScheduleAnswer): whether it fires
 * (`active`) or is `paused`, when it fires next (null while paused), its times in ISO 8601. Each
 * kind's view adds its settings.
 */
export function cronScheduleFields(schedule: CronSchedule) {
	return {
		id: schedule.id,
		cron: schedule.cron,
		tz: schedule.tz,
		state: schedule.pausedAt === undefined ? ('active' as const) : ('paused' as const),
		next_run_at: isoOrNull(nextFiring(schedule)),
		created_at: new Date(schedule.createdAt).toISOString(),
		paused_at: isoOrNull(schedule.pausedAt),
	};
}

/** The schedules of one kind: their sorted set and records, how many may exist, and how a full set is explained. */
export interface ScheduleKind {
	jobs: CronJobs;
	list: string;
	/** The key of a schedule's record. */
	record: (id: string) => string;
	max: number;
	/** `campaign schedules`, as a full-set message says it. */
	what: string;
	/** The setting that raises `max`. */
	maxSetting: string;
}

/** What every schedule's record holds besides its kind's settings. */
export interface CronSchedule {
	id: string;
	cron: string;
	tz: string;
	createdAt: number;
	/** Epoch ms it was paused at; absent while it fires. A paused schedule has no job scheduler. */
	pausedAt?: number;
}

/**
 * Takes the schedule's place in its kind's list (counted and taken in one step), upserts its job
 * scheduler (jobs.ts), then stores its record; a
 * pattern or zone BullMQ refuses gives the place back.
 */
export async function startCronSchedule(
	context: RunnerContext,
	kind: ScheduleKind,
	schedule: CronSchedule,
	names: CronNames,
): Promise<void> {
	const full = await reserve(context, kind.list, kind.max, schedule.id, schedule.createdAt);
	if (full !== undefined) throw new LimitError(409, fullMessage(kind.what, full, kind.max, kind.maxSetting), 'cron');
	try {
		await kind.jobs.upsert(context, schedule.id, { pattern: schedule.cron, tz: schedule.tz });
	} catch (error) {
		await release(context, kind.list, schedule.id);
		throw new FieldError(
			`${names.cron} "${schedule.cron}" with ${names.tz} "${schedule.tz}" is not a valid schedule: ` +
				`${(error as Error).message}`,
			names.cron,
		);
	}
	await context.redis.set(kind.record(schedule.id), JSON.stringify(schedule));
}

export async function findCronSchedule<T extends CronSchedule>(
	context: RunnerContext,
	kind: ScheduleKind,
	id: string,
): Promise<T | undefined> {
	const text = await context.redis.get(kind.record(id));
	return text ? (JSON.parse(text) as T) : undefined;
}

/** The schedules of a kind, newest first. */
export async function listCronSchedules<T extends CronSchedule>(
	context: RunnerContext,
	kind: ScheduleKind,
): Promise<T[]> {
	const ids = await context.redis.zrevrange(kind.list, 0, -1);
	const found: Array<T | undefined> = await Promise.all(ids.map((id) => findCronSchedule<T>(context, kind, id)));
	return found.filter((schedule): schedule is T => schedule !== undefined);
}

/**
 * Pauses a schedule: its record says so first (a firing already queued reads it and makes nothing),
 * then its job scheduler goes, so nothing is queued until it is resumed, whichever process restarts
 * meanwhile. Undefined when there is no such schedule; a paused one is answered as it is.
 */
export async function pauseCronSchedule<T extends CronSchedule>(
	context: RunnerContext,
	kind: ScheduleKind,
	id: string,
): Promise<T | undefined> {
	const schedule = await findCronSchedule<T>(context, kind, id);
	if (!schedule || schedule.pausedAt !== undefined) return schedule;
	const paused: T = { ...schedule, pausedAt: Date.now() };
	// XX: a schedule removed meanwhile stays removed.
	if ((await context.redis.set(kind.record(id), JSON.stringify(paused), 'XX')) !== 'OK') return undefined;
	await kind.jobs.remove(context, id);
	return paused;
}

/**
 * Resumes a paused schedule: its job scheduler again (its next firing the pattern's next time from
 * now; the times it missed are not made up), then its record. A schedule removed meanwhile loses
 * the scheduler again. Undefined when there is no such schedule; an active one is answered as it is.
 */
export async function resumeCronSchedule<T extends CronSchedule>(
	context: RunnerContext,
	kind: ScheduleKind,
	id: string,
): Promise<T | undefined> {
	const schedule = await findCronSchedule<T>(context, kind, id);
	if (!schedule || schedule.pausedAt === undefined) return schedule;
	// JSON leaves the undefined field out: the record is as it was before the pause.
	const resumed: T = { ...schedule, pausedAt: undefined };
	await kind.jobs.upsert(context, id, { pattern: schedule.cron, tz: schedule.tz });
	if ((await context.redis.set(kind.record(id), JSON.stringify(resumed), 'XX')) !== 'OK') {
		await kind.jobs.remove(context, id);
		return undefined;
	}
	return resumed;
}

/**
 * A firing whose schedule is gone, its record and its place in the list (a resume that raced a
 * remove put the job scheduler back after the remove took it), takes the job scheduler out: it would
 * fire for nothing for good. A schedule being created holds its place before its scheduler exists,
 * and one being removed gives it up last, so neither is taken for gone.
 */
export async function dropOrphanScheduler(context: RunnerContext, kind: ScheduleKind, id: string): Promise<void> {
	if ((await context.redis.zscore(kind.list, id)) !== null) return;
	await kind.jobs.remove(context, id);
	context.log.info({ schedule: id }, `a firing of a removed schedule took its job scheduler out (${kind.what})`);
}

/** Stops the job scheduler and forgets the schedule; the campaigns or reindex runs it made stay. */
export async function stopCronSchedule(context: RunnerContext, kind: ScheduleKind, id: string): Promise<void> {
	await kind.jobs.remove(context, id);
	await context.redis.del(kind.record(id));
	await context.redis.zrem(kind.list, id);
}
