/**
 * A reindex run's record in Redis (one hash): settings, state, counters and reading progress.
 * Reading it and turning it into the status every client shows lives here, once.
 */
import type { RunnerContext } from '../context';
import { NotFoundError } from '../errors';
import { newId } from '../keys';
import { redisScript } from '../redisScripts';
import { runCollection } from '../keyGroups';
import type { SourceOrigin } from '../localFiles';
import type { SourceFormat } from '../source';
import { DEFAULT_MAX_DEACTIVATE, limitText, parseLimit, type DeactivateLimit } from './wipeGuard';

export type RunState = 'queued' | 'running' | 'completed' | 'failed' | 'skipped';
export const SETTLED_RUN_STATES: readonly RunState[] = ['completed', 'failed', 'skipped'];

/** The counts `status` shows; a deactivation counts as deactivated, never as updated. */
const RUN_COUNTS = ['read', 'unchanged', 'created', 'updated', 'deactivated', 'rejected', 'failed'] as const;
type RunCount = (typeof RUN_COUNTS)[number];
/** The counts of one reading pass, started again when a killed run resumes. */
export const READING_COUNTS = ['read', 'unchanged', 'rejected'] as const;

export interface RunSettings {
	collection: string;
	source: string;
	/** Who named the source: a local file of an API run is read only inside RUNNER_SOURCE_DIR. */
	origin: SourceOrigin;
	format: SourceFormat;
	idField: string;
	embedding?: Record<string, unknown>;
	deactivateMissing: boolean;
	force: boolean;
	/** How many items --deactivate-missing may deactivate before the run stops instead (wipeGuard.ts). */
	maxDeactivate: DeactivateLimit;
	/** Deactivate however many that is. */
	forceDeactivate: boolean;
	rate: number;
	scheduleId?: string;
	/** The whole source URL, sealed (net/urls.ts), when `source` shows only its origin and path. */
	sealedSource?: string;
}

export interface RunRecord extends RunSettings {
	id: string;
	state: RunState;
	createdAt: number;
	startedAt?: number;
	finishedAt?: number;
	attempt: number;
	bytesRead: number;
	bytesTotal?: number;
	lastError?: string;
	/** What became of --deactivate-missing: done, skipped with the reason, or not asked. */
	deactivation?: string;
	counts: Record<RunCount, number>;
	mismatched: number;
	foreign: number;
}

/** `reindex status --json`: exactly these fields. */
export interface RunStatus {
	id: string;
	state: RunState;
	counts: Record<RunCount, number>;
	/** Source rows read per second over the last 10 seconds. */
	rate: number;
	eta_seconds: number | null;
	last_error: string | null;
}

/** The status and what else a person following the run wants: lists, reports and progress bars show it. */
export interface RunOverview extends RunStatus {
	collection: string;
	mismatched: number;
	foreign: number;
	deactivation: string | null;
	/** Bytes of the source read so far, and its size when known: the progress bar's measure. */
	source_bytes: { read: number; total: number | null };
}

export const newRunId = () => newId('r');

export function runFields(id: string, settings: RunSettings, state: RunState): Record<string, string | number> {
	return {
		id,
		state,
		collection: settings.collection,
		source: settings.source,
		source_sealed: settings.sealedSource ?? '',
		// A schedule stored before origins were kept has none: its runs read as the API's.
		origin: settings.origin ?? 'api',
		format: settings.format,
		id_field: settings.idField,
		embedding: settings.embedding ? JSON.stringify(settings.embedding) : '',
		deactivate_missing: settings.deactivateMissing ? 1 : 0,
		force: settings.force ? 1 : 0,
		max_deactivate: limitText(settings.maxDeactivate),
		force_deactivate: settings.forceDeactivate ? 1 : 0,
		rate: settings.rate,
		schedule_id: settings.scheduleId ?? '',
		created_at: Date.now(),
	};
}

/** A run's hash as read from Redis (or as an event copied it) turned into its record. */
export function runFromHash(hash: Record<string, string>): RunRecord {
	const number = (key: string) => Number(hash[key] ?? 0);
	return {
		id: hash.id,
		state: hash.state as RunState,
		collection: hash.collection,
		source: hash.source,
		sealedSource: hash.source_sealed || undefined,
		origin: hash.origin === 'cli' ? 'cli' : 'api',
		format: hash.format as SourceFormat,
		idField: hash.id_field,
		embedding: hash.embedding ? (JSON.parse(hash.embedding) as Record<string, unknown>) : undefined,
		deactivateMissing: hash.deactivate_missing === '1',
		force: hash.force === '1',
		// A run or schedule stored before the guard existed gets the default: protected too.
		maxDeactivate: parseLimit(hash.max_deactivate ?? '') ?? DEFAULT_MAX_DEACTIVATE,
		forceDeactivate: hash.force_deactivate === '1',
		rate: number('rate'),
		scheduleId: hash.schedule_id || undefined,
		createdAt: number('created_at'),
		startedAt: hash.started_at ? number('started_at') : undefined,
		finishedAt: hash.finished_at ? number('finished_at') : undefined,
		attempt: number('attempt'),
		bytesRead: number('bytes_read'),
		bytesTotal: hash.bytes_total ? number('bytes_total') : undefined,
		lastError: hash.last_error || undefined,
		deactivation: hash.deactivation || undefined,
		counts: Object.fromEntries(RUN_COUNTS.map((name) => [name, number(name)])) as Record<RunCount, number>,
		mismatched: number('mismatched'),
		foreign: number('foreign'),
	};
}

export async function findRun(context: RunnerContext, id: string): Promise<RunRecord | undefined> {
	const collection = await runCollection(context, id);
	if (collection === undefined) return undefined;
	const hash = await context.redis.hgetall(context.keys.reindex.run(collection, id));
	return hash.id ? runFromHash(hash) : undefined;
}

export async function getRun(context: RunnerContext, id: string): Promise<RunRecord> {
	const found = await findRun(context, id);
	if (!found) throw new NotFoundError(`No reindex run with id ${id}`);
	return found;
}

/** Ends a run in a final state with `fields`; false when it had ended already. */
export async function finishRun(
	context: RunnerContext,
	id: string,
	state: Exclude<RunState, 'queued' | 'running'>,
	fields: Record<string, string | number>,
): Promise<boolean> {
	const collection = await runCollection(context, id);
	if (collection === undefined) return false;
	const finish = redisScript(context.redis, 'finishRun');
	const now = Date.now();
	return (
		Number(
			await finish(
				[context.keys.reindex.run(collection, id), context.keys.reindex.outbox(collection)],
				[id, now, ...Object.entries({ ...fields, state, finished_at: now }).flat()],
			),
		) === 1
	);
}

/** Rows read per second over the full seconds before now: the last 10, or fewer while the run is younger. */
async function currentRate(context: RunnerContext, run: RunRecord): Promise<number> {
	const second = Math.floor(Date.now() / 1000);
	const span = Math.min(10, Math.max(1, second - Math.floor((run.startedAt ?? run.createdAt) / 1000)));
	const fields = Array.from({ length: span }, (_, i) => String(second - 1 - i));
	const values = await context.redis.hmget(context.keys.reindex.ticks(run.collection, run.id), ...fields);
	return values.reduce((sum, value) => sum + Number(value ?? 0), 0) / span;
}

/** ETA from the share of the source's bytes read so far (unknown when its size is). */
function etaSeconds(run: RunRecord): number | null {
	if (SETTLED_RUN_STATES.includes(run.state)) return 0;
	if (!run.startedAt || !run.bytesTotal || run.bytesRead <= 0) return null;
	const share = Math.min(1, run.bytesRead / run.bytesTotal);
	return Math.ceil(((Date.now() - run.startedAt) / 1000) * ((1 - share) / share));
}

export function overviewOf(run: RunRecord, rate: number): RunOverview {
	return {
		id: run.id,
		state: run.state,
		counts: run.counts,
		rate,
		eta_seconds: etaSeconds(run),
		last_error: run.lastError ?? null,
		collection: run.collection,
		mismatched: run.mismatched,
		foreign: run.foreign,
		deactivation: run.deactivation ?? null,
		source_bytes: { read: run.bytesRead, total: run.bytesTotal ?? null },
	};
}

export async function runOverview(context: RunnerContext, id: string): Promise<RunOverview> {
	const run = await getRun(context, id);
	return overviewOf(run, run.state === 'running' ? await currentRate(context, run) : 0);
}

export function statusOf(overview: RunOverview): RunStatus {
	const { id, state, counts, rate, eta_seconds, last_error } = overview;
	return { id, state, counts, rate, eta_seconds, last_error };
}

export async function runStatus(context: RunnerContext, id: string): Promise<RunStatus> {
	return statusOf(await runOverview(context, id));
}

export async function listRuns(context: RunnerContext, limit = 100): Promise<RunOverview[]> {
	const ids = await context.redis.zrevrange(context.keys.reindex.runs, 0, limit - 1);
	return Promise.all(ids.map((id) => runOverview(context, id)));
}
