/**
 * A reindex run, in the runner process that took its job: read the source as a stream, reject the
 * rows that cannot be items, skip the items whose content hash is unchanged since their last
 * successful upsert, upsert the rest (paced, bounded), then, only after a source read to its end
 * with no row rejected, deactivate the items the service lists as active that the source no longer
 * holds. Every step can be repeated: a killed run resumes from the start of its source, and what
 * was recorded is skipped, what was not is sent again (an upsert is idempotent).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline, type Readable } from 'node:stream';

import StreamJson from 'stream-json';
import Pick from 'stream-json/filters/Pick';
import StreamArray from 'stream-json/streamers/StreamArray';

import { backoffMs, searchItemSchema, type SearchItem } from 'convo-contract';
import type { RunnerContext } from '../context';
import { CLI_ACCESS, MAX_RECORD_BYTES, readRecords, SourceError, type SourceProgress, type SourceRecord } from '../source';
import { sourceToRead } from '../net/urls';
import { contentHash, embeddingKey } from './hash';
import { decodeItemState, encodeItemState } from './itemState';
import { keepCollection, overlapMessage, releaseCollection, takeCollection } from './lock';
import { Pacer, Pool } from './pace';
import { findRun, finishRun, READING_COUNTS, REINDEX_NAMES, SETTLED_RUN_STATES, type RunRecord, type RunState } from './store';

/** Rows looked up in Redis together. */
const CHUNK = 500;
/** How long an attempt's ids-seen hash outlives a process that died holding it. */
const SEEN_TTL_SECONDS = 7 * 24 * 3600;
/** Notes (rejected rows; failures, mismatches, foreign items) kept per run for the report. */
export const KEEP_NOTES = 1000;

/** Waits between tries of a failed call to the service: 0.5 s doubling, at most 10 s. */
const CALL_BACKOFF = { firstMs: 500, maxMs: 10_000 };
/** Upserts run many at once: each wait is up to half shorter at random, so they do not come back together. */
const UPSERT_BACKOFF = { ...CALL_BACKOFF, jitter: 0.5 };

/** Answers that no item of the run can get past (besides 401, which stops every call: service.ts). */
const STOP_ON: Record<number, string> = {
	403: 'the collection belongs to another business',
	404: 'the service knows no such collection',
};

type Operation = SearchItem['operation'];

interface Upsert {
	externalId: string;
	/** Source line; absent for a deactivation. */
	line?: number;
	item: Record<string, unknown>;
	itemJson: string;
	embedding?: Record<string, unknown>;
	embeddingKey: string;
	active: boolean;
	hash: string;
	/** What the runner's records say the service will answer. */
	expected: Operation;
}

class RunStopped extends Error {}

/** One attempt of a run in this process. */
class RunWork {
	stopped?: string;
	readonly pacer: Pacer;
	readonly pool: Pool;
	readonly runKey: string;
	readonly itemsKey: string;

	constructor(
		readonly context: RunnerContext,
		readonly run: RunRecord,
		readonly attempt: number,
	) {
		this.pacer = new Pacer(run.rate);
		this.pool = new Pool(context.config.RUNNER_CONCURRENCY);
		this.runKey = context.keys.reindex.run(run.id);
		this.itemsKey = context.keys.reindex.items(run.collection);
	}

	stop(reason: string): void {
		this.stopped ??= reason;
	}

	async note(list: 'rejected' | 'problems', note: Record<string, unknown>): Promise<void> {
		const key = this.context.keys.reindex[list](this.run.id);
		await this.context.redis.pipeline().rpush(key, JSON.stringify(note)).ltrim(key, 0, KEEP_NOTES - 1).exec();
	}
}

export async function processRun(context: RunnerContext, runId: string): Promise<RunState | undefined> {
	const run = await findRun(context, runId);
	if (!run || SETTLED_RUN_STATES.includes(run.state)) return run?.state;
	const runKey = context.keys.reindex.run(runId);
	const holder = await takeCollection(context, run.collection, runId);
	if (holder) {
		await finishRun(context, runId, 'skipped', { last_error: overlapMessage(run.collection, holder) });
		context.log.warn({ run: runId, holder }, 'reindex run skipped: its collection is being synced by another run');
		return 'skipped';
	}
	// From here every way out releases the lease (finally), a Redis error included.
	let attempt: number | undefined;
	let work: RunWork | undefined;
	let stopKeeping = () => undefined as void;
	try {
		attempt = await context.redis.hincrby(runKey, 'attempt', 1);
		work = new RunWork(context, run, attempt);
		const running = work;
		stopKeeping = keepCollection(context, run.collection, runId, () => running.stop('another run took the collection: this run stopped'));
		if (attempt > 1) {
			// A resumed run reads its source again from the start: its reading counts start again too.
			await context.redis
				.multi()
				.hset(runKey, Object.fromEntries(READING_COUNTS.map((name) => [name, 0])))
				.del(context.keys.reindex.rejected(runId), context.keys.reindex.seen(runId, attempt - 1))
				.exec();
			context.log.info({ run: runId, attempt }, 'reindex run resumed: reading its source again from the start');
		}
		await context.redis.hset(runKey, { state: 'running', started_at: run.startedAt ?? Date.now(), deactivation: '' });
		if (run.embedding) await context.redis.hset(context.keys.reindex.embeddings(run.collection), embeddingKey(run.embedding), JSON.stringify(run.embedding));
		context.log.info({ run: runId, collection: run.collection, source: run.source }, 'reindex run started');

		await readSource(work);
		if (work.stopped) throw new RunStopped(work.stopped);
		const deactivation = await deactivationStep(work);
		await work.pool.drain();
		if (work.stopped) throw new RunStopped(work.stopped);
		await finishRun(context, runId, 'completed', { deactivation });
		context.log.info({ run: runId }, 'reindex run completed');
		return 'completed';
	} catch (error) {
		// Let the upserts in flight settle (and be recorded) before the run is marked failed.
		await work?.pool.drain().catch(() => undefined);
		const reason =
			error instanceof SourceError
				? `the source could not be read to its end: ${error.message}`
				: error instanceof RunStopped
					? error.message
					: (error as Error).message;
		const deactivation = !run.deactivateMissing
			? ''
			: error instanceof SourceError
				? 'skipped: the source was not read to its end, so which items it no longer holds is not known'
				: 'skipped: the run stopped before it';
		const current = await context.redis.hget(runKey, 'deactivation');
		await finishRun(context, runId, 'failed', { last_error: reason, deactivation: current || deactivation });
		context.log.error({ run: runId, reason }, 'reindex run failed');
		return 'failed';
	} finally {
		stopKeeping();
		await releaseCollection(context, run.collection, runId);
		if (attempt !== undefined) await context.redis.del(context.keys.reindex.seen(runId, attempt));
	}
}

async function readSource(work: RunWork): Promise<void> {
	const progress: SourceProgress = { read: 0 };
	let chunk: SourceRecord[] = [];
	try {
		// The source is checked again here, where it is opened: a link may have changed since the run was created.
		const access = work.run.origin === 'cli' ? CLI_ACCESS : { origin: 'api' as const, sourceDir: work.context.config.RUNNER_SOURCE_DIR, label: REINDEX_NAMES.api.source };
		const source = sourceToRead(work.context.config, { source: work.run.source, sealed: work.run.sealedSource });
		for await (const record of readRecords(source, work.run.format, progress, access, work.context.config)) {
			if (work.stopped) throw new RunStopped(work.stopped);
			chunk.push(record);
			if (chunk.length >= CHUNK) {
				await handleChunk(work, chunk, progress);
				chunk = [];
			}
		}
	} finally {
		// The rows read before a source error are items all the same: they are upserted (never deactivated around).
		if (!work.stopped) await handleChunk(work, chunk, progress);
	}
	await work.pool.drain();
}

interface Row {
	line: number;
	externalId: string;
	item: Record<string, unknown>;
	itemJson: string;
}

/** The id of a row, or why it has none (the field named as the run's client calls it; the value never quoted). */
function idOf(fields: Record<string, unknown>, run: RunRecord): string | { reason: string } {
	const { idField } = run;
	const value = fields[idField];
	if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return { reason: `has no "${idField}" (the ${REINDEX_NAMES[run.origin].idField})` };
	if (typeof value !== 'string' && typeof value !== 'number') return { reason: `has a "${idField}" that is not a string or a number` };
	return String(value);
}

async function handleChunk(work: RunWork, chunk: SourceRecord[], progress: SourceProgress): Promise<void> {
	const { context, run } = work;
	const { redis, keys } = context;
	const rejections: Array<{ line: number; reason: string }> = [];
	const rows: Row[] = [];
	for (const record of chunk) {
		if (!record.ok) {
			rejections.push({ line: record.line, reason: record.reason });
			continue;
		}
		const id = idOf(record.fields, run);
		if (typeof id !== 'string') {
			rejections.push({ line: record.line, reason: id.reason });
			continue;
		}
		const itemJson = JSON.stringify(record.fields);
		const bytes = Buffer.byteLength(itemJson);
		if (bytes > MAX_RECORD_BYTES) {
			rejections.push({ line: record.line, reason: `is ${(bytes / 1048576).toFixed(1)} MB as JSON; an item may be at most ${MAX_RECORD_BYTES / 1048576} MB` });
			continue;
		}
		rows.push({ line: record.line, externalId: id, item: record.fields, itemJson });
	}

	const seenKey = keys.reindex.seen(run.id, work.attempt);
	const lookup = redis.pipeline();
	for (const row of rows) lookup.hsetnx(seenKey, row.externalId, row.line).hget(work.itemsKey, row.externalId);
	// Deleted when the attempt ends; the expiry only cleans up after a process killed twice in a row.
	lookup.expire(seenKey, SEEN_TTL_SECONDS);
	const answers = rows.length > 0 ? ((await lookup.exec()) ?? []) : [];
	const repeated = rows.filter((_, i) => Number(answers[2 * i]?.[1]) === 0);
	const firstLines = repeated.length > 0 ? await redis.hmget(seenKey, ...repeated.map((row) => row.externalId)) : [];
	// The id is not quoted (no reason holds bytes of the source): the line of its first row is.
	repeated.forEach((row, i) => rejections.push({ line: row.line, reason: `repeats the id of line ${firstLines[i]}` }));

	const toSend: Upsert[] = [];
	let unchanged = 0;
	const embeddingKeyOfRun = run.embedding ? embeddingKey(run.embedding) : '';
	rows.forEach((row, i) => {
		if (Number(answers[2 * i]?.[1]) === 0) return;
		const stored = decodeItemState(answers[2 * i + 1]?.[1] as string | null);
		const hash = contentHash(row.item, run.embedding, true);
		if (stored && stored.hash === hash && !run.force) {
			unchanged++;
			return;
		}
		const expected: Operation = !stored ? 'created' : stored.hash === hash ? 'unchanged' : 'updated';
		toSend.push({ ...row, embedding: run.embedding, embeddingKey: embeddingKeyOfRun, active: true, hash, expected });
	});

	const second = String(Math.floor(Date.now() / 1000));
	const counters = redis
		.pipeline()
		.hincrby(work.runKey, 'read', chunk.length)
		.hincrby(work.runKey, 'unchanged', unchanged)
		.hincrby(work.runKey, 'rejected', rejections.length)
		.hset(work.runKey, { bytes_read: progress.read, ...(progress.total ? { bytes_total: progress.total } : {}) })
		.hincrby(keys.reindex.ticks(run.id), second, chunk.length)
		.expire(keys.reindex.ticks(run.id), 3600);
	if (rejections.length > 0) {
		const rejectedKey = keys.reindex.rejected(run.id);
		counters.rpush(rejectedKey, ...rejections.sort((a, b) => a.line - b.line).map((note) => JSON.stringify(note))).ltrim(rejectedKey, 0, KEEP_NOTES - 1);
	}
	await counters.exec();
	for (const upsert of toSend) {
		if (work.stopped) return;
		await work.pool.run(() => upsertOne(work, upsert));
	}
}

/** One B1 call, sent again while the service provably or possibly did not act (both safe: upserts are idempotent). */
async function upsertOne(work: RunWork, upsert: Upsert): Promise<void> {
	const { context, run } = work;
	const service = context.service;
	if (!service) throw new Error('this process has no service client');
	const body = {
		collection_id: run.collection,
		external_id: upsert.externalId,
		item: upsert.item,
		...(upsert.embedding ? { embedding_json: upsert.embedding } : {}),
		active: upsert.active,
	};
	for (let attempt = 1; ; ) {
		if (work.stopped) return;
		await work.pacer.slot();
		let outcome;
		try {
			outcome = await service.call('upsertSearchItem', { body }, STOP_ON);
		} catch (error) {
			// The contract refused the request before it was sent (it names the field).
			return settleFailed(work, upsert, (error as Error).message);
		}
		if (outcome.kind === 'ok') {
			const answer = searchItemSchema.safeParse(outcome.body);
			return settleOk(work, upsert, answer.success ? answer.data.operation : upsert.expected);
		}
		if (outcome.kind === 'hold') {
			work.pacer.hold(outcome.waitMs);
			continue;
		}
		if (outcome.kind === 'stop') return work.stop(`stopped: ${outcome.reason}`);
		if (outcome.kind === 'refused') return settleFailed(work, upsert, outcome.reason);
		if (attempt >= context.config.RUNNER_SEND_ATTEMPTS) return settleFailed(work, upsert, `${outcome.reason} (after ${attempt} attempts)`);
		await sleep(backoffMs(UPSERT_BACKOFF, attempt));
		attempt++;
	}
}

async function settleOk(work: RunWork, upsert: Upsert, operation: Operation): Promise<void> {
	const deactivation = !upsert.active;
	const value = encodeItemState({ hash: upsert.hash, active: upsert.active, embeddingKey: upsert.embeddingKey, itemJson: upsert.itemJson });
	await work.context.redis
		.pipeline()
		.hset(work.itemsKey, upsert.externalId, value)
		.hincrby(work.runKey, deactivation ? 'deactivated' : operation, 1)
		.exec();
	if (operation !== upsert.expected) {
		await work.context.redis.hincrby(work.runKey, 'mismatched', 1);
		await work.note('problems', { kind: 'mismatch', external_id: upsert.externalId, line: upsert.line ?? null, expected: upsert.expected, got: operation });
	}
}

async function settleFailed(work: RunWork, upsert: Upsert, error: string): Promise<void> {
	await work.context.redis.hincrby(work.runKey, 'failed', 1);
	await work.note('problems', { kind: upsert.active ? 'failed' : 'deactivation failed', external_id: upsert.externalId, line: upsert.line ?? null, error });
}

/** --deactivate-missing, when the source allows it: the note the report shows. */
async function deactivationStep(work: RunWork): Promise<string> {
	const { run, context } = work;
	if (!run.deactivateMissing) return '';
	const rejected = Number(await context.redis.hget(work.runKey, 'rejected'));
	if (rejected > 0) {
		return `skipped: ${rejected} source rows were rejected (no id, a repeated id, unreadable or too large), so the source does not list every item it meant to; fix them and run again`;
	}
	await work.pool.drain();
	const listed = await listCollection(work);
	let batch: string[] = [];
	try {
		for await (const { value } of listed as AsyncIterable<{ value: { external_id?: unknown; is_active?: unknown } }>) {
			if (work.stopped) throw new RunStopped(work.stopped);
			if (value.is_active === true && typeof value.external_id === 'string') batch.push(value.external_id);
			if (batch.length >= CHUNK) {
				await deactivateBatch(work, batch);
				batch = [];
			}
		}
	} catch (error) {
		if (error instanceof RunStopped) throw error;
		throw new Error(`listing the collection (B2) failed part way: ${(error as Error).message}`);
	}
	await deactivateBatch(work, batch);
	await work.pool.drain();
	const counts = await context.redis.hmget(work.runKey, 'deactivated', 'foreign');
	return `done: ${counts[0] ?? 0} deactivated; ${counts[1] ?? 0} active items at the service were never sent by the runner and were left alone`;
}

/** B2 as a stream of its items: a collection of a million items is never held whole. */
async function listCollection(work: RunWork): Promise<Readable> {
	const service = work.context.service;
	if (!service) throw new Error('this process has no service client');
	for (let attempt = 1; ; attempt++) {
		const opened = await service.open('listSearchItems', { query: { collection_id: work.run.collection } }, STOP_ON);
		// pipeline(): a body cut off or malformed fails this step instead of crashing the process.
		if (opened.kind === 'stream') return pipeline(opened.body, StreamJson.parser(), Pick.pick({ filter: 'items' }), StreamArray.streamArray(), () => undefined);
		if (opened.kind === 'ok') throw new Error('listing the collection (B2) answered without a body');
		const retryable = opened.kind === 'hold' || opened.kind === 'retry' || opened.kind === 'unknown';
		if (!retryable || attempt >= work.context.config.RUNNER_SEND_ATTEMPTS) throw new RunStopped(`listing the collection (B2) failed: ${opened.reason}`);
		await sleep(opened.kind === 'hold' ? opened.waitMs : backoffMs(CALL_BACKOFF, attempt));
	}
}

async function deactivateBatch(work: RunWork, externalIds: string[]): Promise<void> {
	if (externalIds.length === 0) return;
	const { context, run } = work;
	const seenKey = context.keys.reindex.seen(run.id, work.attempt);
	const [seen, stored] = await Promise.all([context.redis.hmget(seenKey, ...externalIds), context.redis.hmget(work.itemsKey, ...externalIds)]);
	const embeddings = new Map<string, Record<string, unknown> | undefined>();
	for (let i = 0; i < externalIds.length; i++) {
		if (seen[i] !== null) continue;
		const state = decodeItemState(stored[i]);
		if (!state) {
			await context.redis.hincrby(work.runKey, 'foreign', 1);
			await work.note('problems', { kind: 'foreign', external_id: externalIds[i], line: null, error: 'active at the service, absent from the source, never sent by the runner: left alone' });
			continue;
		}
		if (state.embeddingKey && !embeddings.has(state.embeddingKey)) {
			const text = await context.redis.hget(context.keys.reindex.embeddings(run.collection), state.embeddingKey);
			embeddings.set(state.embeddingKey, text ? (JSON.parse(text) as Record<string, unknown>) : undefined);
		}
		const item = JSON.parse(state.itemJson) as Record<string, unknown>;
		const embedding = state.embeddingKey ? embeddings.get(state.embeddingKey) : undefined;
		const upsert: Upsert = {
			externalId: externalIds[i],
			item,
			itemJson: state.itemJson,
			embedding,
			embeddingKey: state.embeddingKey,
			active: false,
			hash: contentHash(item, embedding, false),
			expected: 'updated',
		};
		await work.pool.run(() => upsertOne(work, upsert));
	}
}
