/**
 * `reindex run` and POST /api/reindex: check the settings (each error names the setting as its
 * client calls it), take the collection's lease, store the run and queue its job (or, failing,
 * release the lease); or, with --cron, store a schedule whose every firing is a run of its own. The
 * work happens in the runner processes (run.ts).
 */
import { createHash } from 'node:crypto';
import { newId } from '../keys';
import { readFileSync } from 'node:fs';

import { DEFAULT_REINDEX_RATE, runnerRate } from 'convo-contract';
import { z } from 'zod/v4';

import type { RunnerContext } from '../context';
import { ConflictError, FieldError } from '../errors';
import {
	cronSettings,
	dropOrphanScheduler,
	findCronSchedule,
	listCronSchedules,
	cronScheduleFields,
	pauseCronSchedule,
	resumeCronSchedule,
	startCronSchedule,
	stopCronSchedule,
	type CronSchedule,
	type ScheduleKind,
} from '../cronSchedules';
import { addReindexRunJob, REINDEX_CRON } from '../jobs';
import { checkQueuedRuns } from '../limits';
import { registerRun } from '../keyGroups';
import { settingsError } from '../settingNames';
import { checkLocalSource, LocalSourceError, type SourceOrigin } from '../localFiles';
import { formatOf, isUrl, jsonSyntaxReason, MAX_NESTING, nestsTooDeep } from '../source';
import { checkUrlAllowed } from '../net/outbound';
import { storedSource } from '../net/urls';
import { overlapMessage, releaseCollection, takeCollection } from './lock';
import { dryRunReindex, type DryRunAnswer } from './dryRun';
import { DEFAULT_MAX_DEACTIVATE, LIMIT_RULE, limitText, parseLimit } from './wipeGuard';
import { processRun } from './run';
import { getRun, newRunId, overviewOf, runFields, type RunOverview, type RunSettings, type RunState } from './store';
import { REINDEX_NAMES, type ReindexNames } from './names';

/**
 * Search upserts are not bound by a sender number; the service's account-wide ceiling is about
 * 300/s. The default is the contract's, which the node's Rate field shows too.
 */
export { DEFAULT_REINDEX_RATE };

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
	/** The wipe guard's limit: `10%` of the collection's active items, or a number of items (wipeGuard.ts). */
	maxDeactivate?: string | number;
	forceDeactivate?: boolean;
	/** Answer what a run would do, now, writing nothing (dryRun.ts). */
	dryRun?: boolean;
	rate?: number;
	cron?: string;
	tz?: string;
}

/** Who asks for a run: which local files its source may be (localFiles.ts), and how errors name the settings. */
export interface ReindexClient {
	origin: SourceOrigin;
	names: ReindexNames;
}

const CLI_REINDEX: ReindexClient = { origin: 'cli', names: REINDEX_NAMES.cli };
/** The control API's JSON fields; the Convo node maps them to its own parameters. */
export const API_REINDEX: ReindexClient = { origin: 'api', names: REINDEX_NAMES.api };

// Messages say the rule; the client's name of the setting is put in front (settingsError).
const input = z.object({
	collection: z.uuid({ error: 'must be the UUID of a search collection' }),
	source: z.string({ error: 'is required' }).min(1, { error: 'must be a file path or an http(s) URL' }),
	format: z.string().optional(),
	idField: z.string({ error: 'is required' }).min(1, { error: "must name the field that holds each item's id" }),
	embeddingJson: z.string().optional(),
	embedding: z.record(z.string(), z.unknown()).optional(),
	deactivateMissing: z.boolean().optional(),
	force: z.boolean().optional(),
	maxDeactivate: z.union([z.string(), z.number()], { error: LIMIT_RULE }).optional(),
	forceDeactivate: z.boolean().optional(),
	dryRun: z.boolean().optional(),
	rate: runnerRate('upsert').optional(),
	cron: z.string().optional(),
	tz: z.string().optional(),
});

/** The CLI's --embedding-json file. Its bytes are never quoted: a JSON error gives its rule's position only. */
function readEmbedding(path: string, name: string): Record<string, unknown> {
	let text: string;
	try {
		text = readFileSync(path, 'utf8');
	} catch (error) {
		throw new FieldError(`${name} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, name);
	}
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (error) {
		throw new FieldError(`${name} ${path} ${jsonSyntaxReason(error)}`, name);
	}
	if (value === null || typeof value !== 'object' || Array.isArray(value))
		throw new FieldError(`${name} ${path} must hold one JSON object`, name);
	return value as Record<string, unknown>;
}

/**
 * The settings of a run, checked, each error naming the setting as `client` calls it. A local
 * source must be one `client` may read (the API's: inside RUNNER_SOURCE_DIR, checked before
 * anything else about it, so the answer for a path outside never depends on the path); it is kept
 * absolute so any runner process finds it, and it is checked again where a worker opens it.
 */
async function reindexSettings(
	context: RunnerContext,
	raw: ReindexInput,
	client: ReindexClient = CLI_REINDEX,
): Promise<RunSettings & { schedule?: { cron: string; tz: string }; dryRun: boolean }> {
	const { names } = client;
	const parsed = input.safeParse(raw);
	if (!parsed.success) throw settingsError(parsed.error, { ...names, embeddingJson: names.embedding });
	const given = parsed.data;
	let source = given.source;
	if (!isUrl(source)) {
		try {
			source = await checkLocalSource(source, {
				origin: client.origin,
				sourceDir: context.config.RUNNER_SOURCE_DIR,
				label: names.source,
			});
		} catch (error) {
			if (error instanceof LocalSourceError) throw new FieldError(error.message, names.source);
			throw error;
		}
	}
	const schedule = cronSettings(given, names);
	if (given.dryRun && schedule)
		throw new FieldError(
			`${names.dryRun} cannot be combined with ${names.cron}: a dry run answers now and stores nothing`,
			names.dryRun,
		);
	const maxDeactivate = given.maxDeactivate === undefined ? DEFAULT_MAX_DEACTIVATE : parseLimit(given.maxDeactivate);
	if (!maxDeactivate) throw new FieldError(`${names.maxDeactivate} ${LIMIT_RULE}`, names.maxDeactivate);
	const format = formatOf(given.source, given.format, names);
	const embedding = given.embeddingJson ? readEmbedding(given.embeddingJson, names.embedding) : given.embedding;
	if (embedding && nestsTooDeep(embedding))
		throw new FieldError(
			`${names.embedding} nests objects or arrays deeper than ${MAX_NESTING} levels`,
			names.embedding,
		);
	return {
		collection: given.collection.toLowerCase(),
		source,
		origin: client.origin,
		format,
		idField: given.idField,
		embedding,
		deactivateMissing: given.deactivateMissing ?? false,
		force: given.force ?? false,
		maxDeactivate,
		forceDeactivate: given.forceDeactivate ?? false,
		rate: given.rate ?? DEFAULT_REINDEX_RATE,
		schedule,
		dryRun: given.dryRun ?? false,
	};
}

interface ReindexSchedule extends CronSchedule {
	settings: RunSettings;
}

/**
 * A schedule as answers and lists show it: its settings named as a run's report names them
 * (snake_case, times in ISO 8601), `state` and `next_run_at` (null while paused, or when its
 * pattern names no time left); never the sealed URL.
 */
export interface ReindexScheduleView {
	id: string;
	cron: string;
	tz: string;
	state: 'active' | 'paused';
	next_run_at: string | null;
	collection: string;
	source: string;
	origin: SourceOrigin;
	format: string;
	id_field: string;
	embedding: Record<string, unknown> | null;
	deactivate_missing: boolean;
	force: boolean;
	max_deactivate: string;
	force_deactivate: boolean;
	rate_limit: number;
	created_at: string;
	paused_at: string | null;
}

export type ReindexAnswer =
	| { kind: 'run'; status: RunOverview }
	| { kind: 'schedule'; schedule: ReindexScheduleView }
	| DryRunAnswer;

function reindexSchedules(context: RunnerContext): ScheduleKind {
	return {
		jobs: REINDEX_CRON,
		list: context.keys.reindex.schedules,
		record: (id) => context.keys.reindex.schedule(id),
		max: context.config.RUNNER_MAX_REINDEX_SCHEDULES,
		what: 'reindex schedules',
		maxSetting: 'RUNNER_MAX_REINDEX_SCHEDULES',
	};
}

export async function createReindex(
	context: RunnerContext,
	raw: ReindexInput,
	client: ReindexClient = CLI_REINDEX,
): Promise<ReindexAnswer> {
	const { schedule: repeat, dryRun, ...given } = await reindexSettings(context, raw, client);
	const { names } = client;
	// The runs read their source later, in any runner process: a URL is checked now, and one with
	// credentials or a query is kept sealed, shown as origin and path.
	await checkUrlAllowed(context.config, given.source, names.source);
	const stored = storedSource(context.config, given.source, names.source);
	const settings: RunSettings = { ...given, source: stored.source, sealedSource: stored.sealed };
	if (dryRun) return dryRunReindex(context, settings, names);
	if (repeat) {
		const schedule: ReindexSchedule = { id: newId('s'), ...repeat, settings, createdAt: Date.now() };
		await startCronSchedule(context, reindexSchedules(context), schedule, names);
		context.log.info({ schedule: schedule.id, cron: schedule.cron, tz: schedule.tz }, 'reindex schedule created');
		return { kind: 'schedule', schedule: scheduleView(schedule) };
	}
	await checkQueuedRuns(context);
	const id = newRunId();
	const holder = await takeCollection(context, settings.collection, id);
	if (holder) throw new ConflictError(overlapMessage(context, settings.collection, holder, client.origin));
	try {
		await storeRun(context, id, { ...settings, scheduleId: undefined });
		await addReindexRunJob(context, { run: id });
	} catch (error) {
		// The caller is told the run was not created: neither its record nor the lease naming it may stay.
		await forgetRun(context, id, settings.collection).catch(() => undefined);
		await releaseCollection(context, settings.collection, id).catch((failure: Error) =>
			context.log.error(
				{ run: id, collection: settings.collection, err: failure.message },
				'could not release the collection lease; it ends by itself within its lease time',
			),
		);
		context.log.error(
			{ run: id, collection: settings.collection, err: (error as Error).message },
			'reindex run could not be created',
		);
		throw error;
	}
	context.log.info({ run: id, collection: settings.collection }, 'reindex run queued');
	return { kind: 'run', status: overviewOf(await getRun(context, id), 0) };
}

/**
 * A run's keys sit with its collection's (keys.ts): its home is
 * registered first (keyGroups.ts), then its hash, then it is listed.
 */
async function storeRun(context: RunnerContext, id: string, settings: RunSettings): Promise<void> {
	const { redis, keys } = context;
	const fields = runFields(id, settings, 'queued');
	await registerRun(context, id, settings.collection);
	const runKey = keys.reindex.run(settings.collection, id);
	// HSETNX on id: a scheduled job delivered twice finds its run and does not create a second.
	if ((await redis.hsetnx(runKey, 'id', id)) === 1) {
		await redis.hset(runKey, fields);
		await redis.zadd(keys.reindex.runs, Number(fields.created_at), id);
	}
}

async function forgetRun(context: RunnerContext, id: string, collection: string): Promise<void> {
	const { redis, keys } = context;
	await redis.del(keys.reindex.run(collection, id));
	await redis.multi().zrem(keys.reindex.runs, id).hdel(keys.reindex.homes, id).exec();
}

export async function listReindexSchedules(context: RunnerContext): Promise<ReindexScheduleView[]> {
	return (await listCronSchedules<ReindexSchedule>(context, reindexSchedules(context))).map(scheduleView);
}

function scheduleView(schedule: ReindexSchedule): ReindexScheduleView {
	const { id, cron, tz, state, next_run_at, created_at, paused_at } = cronScheduleFields(schedule);
	// A schedule stored before the wipe guard or origins were kept runs with their defaults (runScheduledReindex).
	const settings: Partial<RunSettings> & RunSettings = schedule.settings;
	return {
		id,
		cron,
		tz,
		state,
		next_run_at,
		collection: settings.collection,
		source: settings.source,
		origin: settings.origin ?? 'api',
		format: settings.format,
		id_field: settings.idField,
		embedding: settings.embedding ?? null,
		deactivate_missing: settings.deactivateMissing,
		force: settings.force,
		max_deactivate: limitText(settings.maxDeactivate ?? DEFAULT_MAX_DEACTIVATE),
		force_deactivate: settings.forceDeactivate ?? false,
		rate_limit: settings.rate,
		created_at,
		paused_at,
	};
}

/**
 * Pauses a reindex schedule (it starts no run until resumed, a runner restarted meanwhile included;
 * a run already started goes on) or resumes it from its next time on (the times it missed are not
 * made up). Undefined when there is no such schedule; one already so is answered as it is.
 */
export async function pauseOrResumeReindexSchedule(
	context: RunnerContext,
	id: string,
	act: 'pause' | 'resume',
): Promise<ReindexScheduleView | undefined> {
	const change = act === 'pause' ? pauseCronSchedule<ReindexSchedule> : resumeCronSchedule<ReindexSchedule>;
	const schedule = await change(context, reindexSchedules(context), id);
	if (schedule) context.log.info({ schedule: id }, `reindex schedule ${act === 'pause' ? 'paused' : 'resumed'}`);
	return schedule && scheduleView(schedule);
}

export async function removeReindexSchedule(context: RunnerContext, id: string): Promise<boolean> {
	if (!(await findCronSchedule(context, reindexSchedules(context), id))) return false;
	await stopCronSchedule(context, reindexSchedules(context), id);
	return true;
}

/**
 * A reindex schedule's due firing (the scheduled job's processor, jobs.ts): a run of its own, its id
 * derived from the job's, so a job delivered twice finds the run it made.
 */
export async function runScheduledReindex(
	context: RunnerContext,
	scheduleId: string,
	jobId: string,
): Promise<RunState | undefined> {
	const schedule = await findCronSchedule<ReindexSchedule>(context, reindexSchedules(context), scheduleId);
	if (!schedule) {
		await dropOrphanScheduler(context, reindexSchedules(context), scheduleId);
		return undefined;
	}
	// Paused: a firing queued before its job scheduler went makes nothing.
	if (schedule.pausedAt !== undefined) return undefined;
	const id = `r${createHash('sha256').update(jobId).digest('hex').slice(0, 14)}`;
	// A schedule stored before the wipe guard existed runs with its default: protected too.
	const kept: Partial<RunSettings> = schedule.settings;
	await storeRun(context, id, {
		...schedule.settings,
		maxDeactivate: kept.maxDeactivate ?? DEFAULT_MAX_DEACTIVATE,
		forceDeactivate: kept.forceDeactivate ?? false,
		scheduleId: schedule.id,
	});
	return processRun(context, id);
}
