/**
 * One attempt of a reindex run in this process: what its steps (chunk.ts, upsert.ts,
 * deactivate.ts) share. The pacer and the pool of its upserts, its Redis keys, the notes it keeps
 * for the report, and the stop that any step may call and every step checks.
 */
import type { Backoff } from 'convo-contract';

import type { RunnerConfig } from '../config';
import type { RunnerContext } from '../context';
import type { ConvoService } from '../service';
import { Pacer, Pool } from './pace';
import type { RunRecord } from './store';

/** Notes (rejected rows; failures, mismatches, foreign items) kept per run for the report. */
export const KEEP_NOTES = 1000;

/** Answers that no item of the run can get past (besides 401, which stops every call: service.ts). */
export const STOP_ON: Record<number, string> = {
	403: 'the collection belongs to another business',
	404: 'the service knows no such collection',
};

/** Waits between tries of a failed call to the service: RUNNER_REINDEX_BACKOFF (0.5 s) doubling, at most 10 s. */
export const callBackoff = (config: RunnerConfig): Backoff => ({
	firstMs: config.RUNNER_REINDEX_BACKOFF,
	maxMs: 10_000,
});

/**
 * What listing the collection against a read of the source needs (deactivate.ts): a run's
 * attempt, or a dry run, which keeps the ids it read in memory rather than in Redis.
 */
export interface CollectionScan {
	readonly context: RunnerContext;
	readonly run: RunRecord;
	readonly service: ConvoService;
	readonly stopped?: string;
	/** For each id, whether this read of the source held it. */
	seenOf(ids: string[]): Promise<boolean[]>;
}

/** Thrown to end the attempt with its stop reason. */
export class RunStopped extends Error {}

export class RunWork implements CollectionScan {
	stopped?: string;
	readonly pacer: Pacer;
	readonly pool: Pool;
	readonly runKey: string;
	readonly itemsKey: string;
	/** The ids this attempt read from its source, each with its first line. */
	readonly seenKey: string;
	/** The active ids the collection listed that this attempt did not read (deactivate.ts). */
	readonly missingKey: string;

	constructor(
		readonly context: RunnerContext,
		readonly run: RunRecord,
		readonly attempt: number,
	) {
		this.pacer = new Pacer(run.rate);
		this.pool = new Pool(context.config.RUNNER_CONCURRENCY);
		this.runKey = context.keys.reindex.run(run.collection, run.id);
		this.itemsKey = context.keys.reindex.items(run.collection);
		this.seenKey = context.keys.reindex.seen(run.collection, run.id, attempt);
		this.missingKey = context.keys.reindex.missing(run.collection, run.id, attempt);
	}

	/** The client of the service; a process without one cannot work a run. */
	get service(): ConvoService {
		if (!this.context.service) throw new Error('this process has no service client');
		return this.context.service;
	}

	async seenOf(ids: string[]): Promise<boolean[]> {
		return (await this.context.redis.hmget(this.seenKey, ...ids)).map((line) => line !== null);
	}

	stop(reason: string): void {
		this.stopped ??= reason;
	}

	async note(list: 'rejected' | 'problems', note: Record<string, unknown>): Promise<void> {
		const key = this.context.keys.reindex[list](this.run.collection, this.run.id);
		await this.context.redis
			.pipeline()
			.rpush(key, JSON.stringify(note))
			.ltrim(key, 0, KEEP_NOTES - 1)
			.exec();
	}
}
