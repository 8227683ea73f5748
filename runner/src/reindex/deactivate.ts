/**
 * --deactivate-missing: after a source read to its end with no row rejected, the items the
 * service lists as active (B2, streamed) that this attempt did not read are upserted again with
 * active:false and their last payload. An active item the runner never sent is left alone and noted.
 * What would go is counted before anything goes: above the run's limit (wipeGuard.ts), unless told to
 * go ahead, nothing is deactivated and the run fails.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline, type Readable } from 'node:stream';

import StreamJson from 'stream-json';
import Pick from 'stream-json/filters/Pick';
import StreamArray from 'stream-json/streamers/StreamArray';

import { backoffMs } from 'convo-contract';
import { CHUNK } from './chunk';
import { judgeDeactivation, type GuardVerdict } from './wipeGuard';
import { contentHash } from './contentHash';
import { decodeItemState } from './itemState';
import { REINDEX_NAMES } from './names';
import { upsertOne, type Upsert } from './upsert';
import { callBackoff, RunStopped, STOP_ON, type CollectionScan, type RunWork } from './work';

/** Why a run with rejected rows deactivates nothing (the same words for a run and a dry run). */
export const rejectedRowsNote = (rejected: number) =>
	`skipped: ${rejected} source rows were rejected (no id, a repeated id, unreadable or too large), ` +
	'so the source does not list every item it meant to; fix them and run again';

/** How long an attempt's list of missing ids outlives a process that died holding it (as its seen hash). */
const MISSING_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Deactivates what the source no longer holds, when the run asks and the read allows it: answers
 * the note the report shows. The collection is listed once: the active ids the source did not
 * hold are kept in a list of the attempt's, counted, judged (wipeGuard.ts), and only then deactivated.
 */
export async function deactivateMissing(work: RunWork): Promise<string> {
	const { run, context } = work;
	if (!run.deactivateMissing) return '';
	const rejected = Number(await context.redis.hget(work.runKey, 'rejected'));
	if (rejected > 0) return rejectedRowsNote(rejected);
	await work.pool.drain();
	const verdict = await guardDeactivation(work, async (ids) => {
		await context.redis
			.pipeline()
			.rpush(work.missingKey, ...ids)
			.expire(work.missingKey, MISSING_TTL_SECONDS)
			.exec();
	});
	if (!verdict.passes) {
		// Kept as the run's deactivation note; the run fails with the same sentence (run.ts).
		await context.redis.hset(work.runKey, 'deactivation', `withheld: ${verdict.text}`);
		throw new RunStopped(verdict.text);
	}
	for (let from = 0; ; from += CHUNK) {
		if (work.stopped) throw new RunStopped(work.stopped);
		const batch = await context.redis.lrange(work.missingKey, from, from + CHUNK - 1);
		if (batch.length > 0) await deactivateBatch(work, batch);
		if (batch.length < CHUNK) break;
	}
	await work.pool.drain();
	const counts = await context.redis.hmget(work.runKey, 'deactivated', 'foreign');
	return (
		`done: ${counts[0] ?? 0} deactivated; ` +
		`${counts[1] ?? 0} active items at the service were never sent by the runner and were left alone`
	);
}

interface MissingCount {
	/** Items the service lists as active. */
	active: number;
	/** Of them, those the runner sent before and this read did not hold: what deactivation would upsert inactive. */
	missing: number;
}

/**
 * Lists the collection (B2, once) and judges what deactivation would do, changing nothing at the
 * service; `keep` is handed the active ids the read did not hold (the runner's and foreign ones).
 */
export async function guardDeactivation(
	scan: CollectionScan,
	keep?: (ids: string[]) => Promise<void>,
): Promise<GuardVerdict & MissingCount> {
	const count: MissingCount = { active: 0, missing: 0 };
	await forEachActiveBatch(scan, async (ids) => {
		count.active += ids.length;
		const seen = await scan.seenOf(ids);
		const unread = ids.filter((_, i) => !seen[i]);
		if (unread.length === 0) return;
		const stored = await scan.context.redis.hmget(scan.context.keys.reindex.items(scan.run.collection), ...unread);
		count.missing += stored.filter((state) => state !== null).length;
		await keep?.(unread);
	});
	return { ...count, ...judgeDeactivation(count.missing, count.active, scan.run, REINDEX_NAMES[scan.run.origin]) };
}

/** The ids of the collection's active items, CHUNK at a time, as B2 streams them. */
async function forEachActiveBatch(scan: CollectionScan, handle: (ids: string[]) => Promise<void>): Promise<void> {
	const listed = await listCollection(scan);
	let batch: string[] = [];
	try {
		for await (const { value } of listed as AsyncIterable<{ value: { external_id?: unknown; is_active?: unknown } }>) {
			if (scan.stopped) throw new RunStopped(scan.stopped);
			if (value.is_active === true && typeof value.external_id === 'string') batch.push(value.external_id);
			if (batch.length >= CHUNK) {
				await handle(batch);
				batch = [];
			}
		}
	} catch (error) {
		if (error instanceof RunStopped) throw error;
		throw new Error(`listing the collection (B2) failed part way: ${(error as Error).message}`);
	}
	if (batch.length > 0) await handle(batch);
}

/** B2 as a stream of its items: a collection of a million items is never held whole. */
async function listCollection(scan: CollectionScan): Promise<Readable> {
	const service = scan.service;
	for (let attempt = 1; ; attempt++) {
		const opened = await service.open('listSearchItems', { query: { collection_id: scan.run.collection } }, STOP_ON);
		// pipeline(): a body cut off or malformed fails this step instead of crashing the process.
		if (opened.kind === 'stream')
			return pipeline(
				opened.body,
				StreamJson.parser(),
				Pick.pick({ filter: 'items' }),
				StreamArray.streamArray(),
				() => undefined,
			);
		if (opened.kind === 'ok') throw new Error('listing the collection (B2) answered without a body');
		const retryable = opened.kind === 'hold' || opened.kind === 'retry' || opened.kind === 'unknown';
		if (!retryable || attempt >= scan.context.config.RUNNER_SEND_ATTEMPTS)
			throw new RunStopped(`listing the collection (B2) failed: ${opened.reason}`);
		await sleep(opened.kind === 'hold' ? opened.waitMs : backoffMs(callBackoff(scan.context.config), attempt));
	}
}

async function deactivateBatch(work: RunWork, externalIds: string[]): Promise<void> {
	const { context, run } = work;
	const [seen, stored] = await Promise.all([
		work.seenOf(externalIds),
		context.redis.hmget(work.itemsKey, ...externalIds),
	]);
	const embeddings = new Map<string, Record<string, unknown> | undefined>();
	for (let i = 0; i < externalIds.length; i++) {
		if (seen[i]) continue;
		const state = decodeItemState(stored[i]);
		if (!state) {
			await context.redis.hincrby(work.runKey, 'foreign', 1);
			await work.note('problems', {
				kind: 'foreign',
				external_id: externalIds[i],
				line: null,
				error: 'active at the service, absent from the source, never sent by the runner: left alone',
			});
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
