/**
 * `reindex run`: check the settings (each error names its flag), take the collection's lease,
 * store the run and queue its job; or, with --cron, store a schedule whose every run is a run of
 * its own. The work happens in the runner processes (run.ts).
 */
import { createHash } from 'node:crypto';
import { newId } from '../keys';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

import { z } from 'zod/v4';

import { ConflictError, UserError, type RunnerContext } from '../context';
import { checkQueuedRuns, release, takeReindexSchedulePlace } from '../limits';
import { formatOf, isUrl, SourceError } from '../source';
import { checkUrlAllowed } from '../net/outbound';
import { SealError, storedSource } from '../net/urls';
import { overlapMessage, takeCollection } from './lock';
import { processRun } from './run';
import { getRun, newRunId, overviewOf, runFields, type RunOverview, type RunSettings, type RunState } from './store';

/** Search upserts are not bound by a sender number; the service's account-wide ceiling is about 300/s. */
export const DEFAULT_REINDEX_RATE = 100;

export interface ReindexInput {
	collection: string;
	source: string;
	format?: string;
	idField: string;
	/** Path of a file holding the embedding_json object sent with every item (the CLI's --embedding-json). */
	embeddingJson?: string;
	/** The embedding_json object itself (the control API's). */
	embedding?: Record<string, unknown>;
	deactivateMissing?: boolean;
	force?: boolean;
	rate?: number;
	cron?: string;
	tz?: string;
}

const input = z.object({
	collection: z.uuid({ error: '--collection must be the UUID of a search collection' }),
	source: z.string({ error: '--source is required' }).min(1, { error: '--source must be a file path or an http(s) URL' }),
	format: z.string().optional(),
	idField: z.string({ error: '--id-field is required' }).min(1, { error: '--id-field must name the field that holds each item\'s id' }),
	embeddingJson: z.string().optional(),
	embedding: z.record(z.string(), z.unknown()).optional(),
	deactivateMissing: z.boolean().optional(),
	force: z.boolean().optional(),
	rate: z
		.number({ error: '--rate must be a number' })
		.int({ error: '--rate must be a whole number of upserts per second' })
		.min(1, { error: '--rate must be at least 1 upsert per second' })
		.max(1000, { error: '--rate may be at most 1000 upserts per second' })
		.optional(),
	cron: z.string().optional(),
	tz: z.string().optional(),
});

function readEmbedding(path: string): Record<string, unknown> {
	let value: unknown;
	try {
		value = JSON.parse(readFileSync(path, 'utf8'));
	} catch (error) {
		throw new UserError(`--embedding-json ${path} cannot be read as JSON: ${(error as Error).message}`);
	}
	if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UserError(`--embedding-json ${path} must hold one JSON object`);
	return value as Record<string, unknown>;
}

/** The settings of a run, checked; a local source is made absolute so any runner process finds it. */
export function reindexSettings(raw: ReindexInput): RunSettings & { cron?: string; tz?: string } {
	const parsed = input.safeParse(raw);
	if (!parsed.success) throw new UserError(parsed.error.issues.map((issue) => issue.message).join('; '));
	const given = parsed.data;
	if (given.tz && !given.cron) throw new UserError('--tz goes with --cron');
	let format;
	try {
		format = formatOf(given.source, given.format);
	} catch (error) {
		throw new UserError((error as SourceError).message);
	}
	let source = given.source;
	if (!isUrl(source)) {
		source = resolve(source);
		let isFile = false;
		try {
			isFile = statSync(source).isFile();
		} catch {
			throw new UserError(`--source ${source}: no such file`);
		}
		if (!isFile) throw new UserError(`--source ${source} is not a file`);
	}
	return {
		collection: given.collection.toLowerCase(),
		source,
		format,
		idField: given.idField,
		embedding: given.embeddingJson ? readEmbedding(given.embeddingJson) : given.embedding,
		deactivateMissing: given.deactivateMissing ?? false,
		force: given.force ?? false,
		rate: given.rate ?? DEFAULT_REINDEX_RATE,
		cron: given.cron,
		tz: given.cron ? (given.tz ?? 'UTC') : undefined,
	};
}

export interface ReindexSchedule {
	id: string;
	cron: string;
	tz: string;
	settings: RunSettings;
	createdAt: number;
}

export type ReindexAnswer = { kind: 'run'; status: RunOverview } | { kind: 'schedule'; schedule: ReindexSchedule };

const reindexSchedulerId = (id: string) => `reindex-${id}`;

export async function createReindex(context: RunnerContext, raw: ReindexInput): Promise<ReindexAnswer> {
	const { cron, tz, ...given } = reindexSettings(raw);
	const { redis, keys } = context;
	// The runs read their source later, in any runner process: a URL is checked now, and one with
	// credentials or a query is kept sealed, shown as origin and path.
	await checkUrlAllowed(context.config, given.source, '--source');
	let stored;
	try {
		stored = storedSource(context.config, given.source, '--source');
	} catch (error) {
		throw error instanceof SealError ? new UserError(error.message) : error;
	}
	const settings: RunSettings = { ...given, source: stored.source, sealedSource: stored.sealed };
	if (cron) {
		const schedule: ReindexSchedule = { id: newId('s'), cron, tz: tz ?? 'UTC', settings, createdAt: Date.now() };
		await takeReindexSchedulePlace(context, schedule.id, schedule.createdAt);
		try {
			await context.queues.reindex.upsertJobScheduler(
				reindexSchedulerId(schedule.id),
				{ pattern: cron, tz: schedule.tz },
				{ name: 'scheduled', data: { schedule: schedule.id }, opts: { removeOnComplete: true, removeOnFail: 50 } },
			);
		} catch (error) {
			await release(context, keys.reindex.schedules, schedule.id);
			throw new UserError(`--cron "${cron}" with --tz "${schedule.tz}" is not a valid schedule: ${(error as Error).message}`);
		}
		await redis.set(keys.reindex.schedule(schedule.id), JSON.stringify(schedule));
		await redis.zadd(keys.reindex.schedules, schedule.createdAt, schedule.id);
		context.log.info({ schedule: schedule.id, cron, tz: schedule.tz }, 'reindex schedule created');
		return { kind: 'schedule', schedule: scheduleView(schedule) };
	}
	await checkQueuedRuns(context);
	const id = newRunId();
	const holder = await takeCollection(context, settings.collection, id);
	if (holder) throw new ConflictError(overlapMessage(settings.collection, holder));
	await storeRun(context, id, { ...settings, scheduleId: undefined });
	await context.queues.reindex.add('run', { run: id }, { jobId: `run-${id}`, removeOnComplete: true, removeOnFail: 100 });
	context.log.info({ run: id, collection: settings.collection }, 'reindex run queued');
	return { kind: 'run', status: overviewOf(await getRun(context, id), 0) };
}

async function storeRun(context: RunnerContext, id: string, settings: RunSettings): Promise<void> {
	const fields = runFields(id, settings, 'queued');
	// HSETNX on id: a scheduled job delivered twice finds its run and does not create a second.
	if ((await context.redis.hsetnx(context.keys.reindex.run(id), 'id', id)) === 1) {
		await context.redis.hset(context.keys.reindex.run(id), fields);
		await context.redis.zadd(context.keys.reindex.runs, Number(fields.created_at), id);
	}
}

export async function listReindexSchedules(context: RunnerContext): Promise<ReindexSchedule[]> {
	const ids = await context.redis.zrevrange(context.keys.reindex.schedules, 0, -1);
	const texts = ids.length > 0 ? await context.redis.mget(...ids.map((id) => context.keys.reindex.schedule(id))) : [];
	return texts.filter((text): text is string => text !== null).map((text) => scheduleView(JSON.parse(text) as ReindexSchedule));
}

/** A schedule as answers and lists show it: without the sealed URL. */
function scheduleView(schedule: ReindexSchedule): ReindexSchedule {
	const { sealedSource: _sealed, ...settings } = schedule.settings;
	return { ...schedule, settings };
}

export async function removeReindexSchedule(context: RunnerContext, id: string): Promise<boolean> {
	if (!(await context.redis.get(context.keys.reindex.schedule(id)))) return false;
	await context.queues.reindex.removeJobScheduler(reindexSchedulerId(id));
	await context.redis.del(context.keys.reindex.schedule(id));
	await context.redis.zrem(context.keys.reindex.schedules, id);
	return true;
}

/** The processor of the reindex queue: a queued run, or a cron schedule's due run (its id derived from the job's, so a repeat finds it). */
export async function processReindexJob(context: RunnerContext, job: { name: string; id?: string; data: { run?: string; schedule?: string } }): Promise<RunState | undefined> {
	if (job.name === 'run' && job.data.run) return processRun(context, job.data.run);
	if (job.name === 'scheduled' && job.data.schedule) {
		const text = await context.redis.get(context.keys.reindex.schedule(job.data.schedule));
		if (!text) return undefined;
		const schedule = JSON.parse(text) as ReindexSchedule;
		const id = `r${createHash('sha256').update(String(job.id)).digest('hex').slice(0, 14)}`;
		await storeRun(context, id, { ...schedule.settings, scheduleId: schedule.id });
		return processRun(context, id);
	}
	context.log.warn({ job: job.name }, 'unknown reindex job');
	return undefined;
}
