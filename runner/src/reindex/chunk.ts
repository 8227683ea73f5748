/**
 * Reading a run's source in chunks: each chunk's rows are checked (an id, at most
 * MAX_RECORD_BYTES), looked up in Redis together (a repeated id in this attempt, the item's last
 * upsert), counted, and the new or changed items handed to the paced upserts (upsert.ts).
 */
import { CLI_ACCESS, MAX_RECORD_BYTES, readRecords, type SourceProgress, type SourceRecord } from '../source';
import { sourceToRead } from '../net/urls';
import { contentHash, embeddingKey } from './contentHash';
import { decodeItemState } from './itemState';
import type { RunRecord } from './store';
import { REINDEX_NAMES } from './names';
import { upsertOne, type Operation, type Upsert } from './upsert';
import { KEEP_NOTES, RunStopped, type RunWork } from './work';

/** Rows (or listed ids, deactivate.ts) looked up in Redis together. */
export const CHUNK = 500;
/** How long an attempt's ids-seen hash outlives a process that died holding it. */
const SEEN_TTL_SECONDS = 7 * 24 * 3600;

/** The rows of a run's source, CHUNK at a time, until its end or a stop. */
export async function forEachChunk(
	scan: { context: RunWork['context']; run: RunRecord; readonly stopped?: string },
	progress: SourceProgress,
	handle: (chunk: SourceRecord[]) => Promise<void>,
): Promise<void> {
	const { context, run } = scan;
	let chunk: SourceRecord[] = [];
	try {
		// The source is checked again here, where it is opened: a link may have changed since the run was created.
		const access =
			run.origin === 'cli'
				? CLI_ACCESS
				: { origin: 'api' as const, sourceDir: context.config.RUNNER_SOURCE_DIR, label: REINDEX_NAMES.api.source };
		const source = sourceToRead(context.config, { source: run.source, sealed: run.sealedSource });
		for await (const record of readRecords(source, run.format, progress, access, context.config)) {
			if (scan.stopped) throw new RunStopped(scan.stopped);
			chunk.push(record);
			if (chunk.length >= CHUNK) {
				await handle(chunk);
				chunk = [];
			}
		}
	} finally {
		// The rows read before a source error are items all the same: they are upserted (never deactivated around).
		if (!scan.stopped) await handle(chunk);
	}
}

/** Reads the source to its end (or to a stop), and waits for the upserts it started. */
export async function readSource(work: RunWork): Promise<void> {
	const progress: SourceProgress = { read: 0 };
	await forEachChunk(work, progress, (chunk) => handleChunk(work, chunk, progress));
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
	if (value === undefined || value === null || (typeof value === 'string' && value.trim() === ''))
		return { reason: `has no "${idField}" (the ${REINDEX_NAMES[run.origin].idField})` };
	if (typeof value !== 'string' && typeof value !== 'number')
		return { reason: `has a "${idField}" that is not a string or a number` };
	return String(value);
}

/**
 * Per row with an id: the line of an earlier row with the same id in this read (null when it is the
 * first), and the item's stored state.
 */
type RowLookup = (
	externalIds: string[],
	lines: number[],
) => Promise<Array<{ firstLine: string | null; stored: string | null }>>;

interface SortedChunk {
	rejections: Array<{ line: number; reason: string }>;
	unchanged: number;
	/** The items to upsert, each with what the service is expected to answer. */
	toSend: Upsert[];
}

/**
 * What a chunk's rows are: rejected (with the reason), unchanged since their last upsert, or to
 * send. The same for a run and a dry run; only where the ids read so far are kept differs (`lookup`).
 */
export async function sortChunk(run: RunRecord, chunk: SourceRecord[], lookup: RowLookup): Promise<SortedChunk> {
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
			const size = (bytes / 1048576).toFixed(1);
			rejections.push({
				line: record.line,
				reason: `is ${size} MB as JSON; an item may be at most ${MAX_RECORD_BYTES / 1048576} MB`,
			});
			continue;
		}
		rows.push({ line: record.line, externalId: id, item: record.fields, itemJson });
	}
	const found =
		rows.length > 0
			? await lookup(
					rows.map((row) => row.externalId),
					rows.map((row) => row.line),
				)
			: [];

	const toSend: Upsert[] = [];
	let unchanged = 0;
	const embeddingKeyOfRun = run.embedding ? embeddingKey(run.embedding) : '';
	rows.forEach((row, i) => {
		const { firstLine, stored: storedText } = found[i];
		// The id is not quoted (no reason holds bytes of the source): the line of its first row is.
		if (firstLine !== null) {
			rejections.push({ line: row.line, reason: `repeats the id of line ${firstLine}` });
			return;
		}
		const stored = decodeItemState(storedText);
		const hash = contentHash(row.item, run.embedding, true);
		if (stored && stored.hash === hash && !run.force) {
			unchanged++;
			return;
		}
		const expected: Operation = !stored ? 'created' : stored.hash === hash ? 'unchanged' : 'updated';
		toSend.push({ ...row, embedding: run.embedding, embeddingKey: embeddingKeyOfRun, active: true, hash, expected });
	});
	rejections.sort((a, b) => a.line - b.line);
	return { rejections, unchanged, toSend };
}

async function handleChunk(work: RunWork, chunk: SourceRecord[], progress: SourceProgress): Promise<void> {
	const { context, run, seenKey } = work;
	const { redis, keys } = context;
	const { rejections, unchanged, toSend } = await sortChunk(run, chunk, async (ids, lines) => {
		const lookup = redis.pipeline();
		ids.forEach((id, i) => lookup.hsetnx(seenKey, id, lines[i]).hget(work.itemsKey, id));
		// Deleted when the attempt ends; the expiry only cleans up after a process killed twice in a row.
		lookup.expire(seenKey, SEEN_TTL_SECONDS);
		const answers = (await lookup.exec()) ?? [];
		const repeated = ids.filter((_, i) => Number(answers[2 * i]?.[1]) === 0);
		const firstLines = repeated.length > 0 ? await redis.hmget(seenKey, ...repeated) : [];
		let next = 0;
		return ids.map((_, i) => ({
			firstLine: Number(answers[2 * i]?.[1]) === 0 ? (firstLines[next++] ?? '?') : null,
			stored: (answers[2 * i + 1]?.[1] as string | null) ?? null,
		}));
	});

	const second = String(Math.floor(Date.now() / 1000));
	const counters = redis
		.pipeline()
		.hincrby(work.runKey, 'read', chunk.length)
		.hincrby(work.runKey, 'unchanged', unchanged)
		.hincrby(work.runKey, 'rejected', rejections.length)
		.hset(work.runKey, { bytes_read: progress.read, ...(progress.total ? { bytes_total: progress.total } : {}) })
		.hincrby(keys.reindex.ticks(run.collection, run.id), second, chunk.length)
		.expire(keys.reindex.ticks(run.collection, run.id), 3600);
	if (rejections.length > 0) {
		const rejectedKey = keys.reindex.rejected(run.collection, run.id);
		counters
			.rpush(rejectedKey, ...rejections.map((note) => JSON.stringify(note)))
			.ltrim(rejectedKey, 0, KEEP_NOTES - 1);
	}
	await counters.exec();
	for (const upsert of toSend) {
		if (work.stopped) return;
		await work.pool.run(() => upsertOne(work, upsert));
	}
}
