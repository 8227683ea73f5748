/**
 * One item's upsert (B1), paced by the run's Pacer and run in its Pool: sent again while the
 * service provably or possibly did not act (both safe: an upsert is idempotent), then recorded.
 * Only a 2xx is recorded as the item's state (itemState.ts); a failure is counted and noted.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { backoffMs, searchItemSchema, type SearchItem } from 'convo-contract';
import { encodeItemState } from './itemState';
import type { RunnerConfig } from '../config';
import { callBackoff, STOP_ON, type RunWork } from './work';

/** Upserts run many at once: each wait is up to half shorter at random, so they do not come back together. */
const upsertBackoff = (config: RunnerConfig) => ({ ...callBackoff(config), jitter: 0.5 });

export type Operation = SearchItem['operation'];

export interface Upsert {
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

export async function upsertOne(work: RunWork, upsert: Upsert): Promise<void> {
	const { context, run } = work;
	const service = work.service;
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
		if (attempt >= context.config.RUNNER_SEND_ATTEMPTS)
			return settleFailed(work, upsert, `${outcome.reason} (after ${attempt} attempts)`);
		await sleep(backoffMs(upsertBackoff(context.config), attempt));
		attempt++;
	}
}

async function settleOk(work: RunWork, upsert: Upsert, operation: Operation): Promise<void> {
	const deactivation = !upsert.active;
	const value = encodeItemState({
		hash: upsert.hash,
		active: upsert.active,
		embeddingKey: upsert.embeddingKey,
		itemJson: upsert.itemJson,
	});
	await work.context.redis
		.pipeline()
		.hset(work.itemsKey, upsert.externalId, value)
		.hincrby(work.runKey, deactivation ? 'deactivated' : operation, 1)
		.exec();
	if (operation !== upsert.expected) {
		await work.context.redis.hincrby(work.runKey, 'mismatched', 1);
		await work.note('problems', {
			kind: 'mismatch',
			external_id: upsert.externalId,
			line: upsert.line ?? null,
			expected: upsert.expected,
			got: operation,
		});
	}
}

async function settleFailed(work: RunWork, upsert: Upsert, error: string): Promise<void> {
	await work.context.redis.hincrby(work.runKey, 'failed', 1);
	await work.note('problems', {
		kind: upsert.active ? 'failed' : 'deactivation failed',
		external_id: upsert.externalId,
		line: upsert.line ?? null,
		error,
	});
}
