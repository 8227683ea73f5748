/**
 * --deactivate-missing: after a source read to its end with no row rejected, the items the
 * service lists as active (B2, streamed) that this attempt did not read are upserted again with
 * active:false and their last payload. An active item the runner never sent is left alone and noted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline, type Readable } from 'node:stream';

import StreamJson from 'stream-json';
import Pick from 'stream-json/filters/Pick';
import StreamArray from 'stream-json/streamers/StreamArray';

import { backoffMs } from 'convo-contract';
import { CHUNK } from './chunk';
import { contentHash } from './hash';
import { decodeItemState } from './itemState';
import { upsertOne, type Upsert } from './upsert';
import { CALL_BACKOFF, RunStopped, STOP_ON, type RunWork } from './work';

/** Deactivates what the source no longer holds, when the run asks and the read allows it: answers the note the report shows. */
export async function deactivateMissing(work: RunWork): Promise<string> {
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
	const service = work.service;
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
	const [seen, stored] = await Promise.all([context.redis.hmget(work.seenKey, ...externalIds), context.redis.hmget(work.itemsKey, ...externalIds)]);
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
