/**
 * A reindex run, in the runner process that took its job: read the source as a stream, reject the
 * rows that cannot be items, skip the items whose content hash is unchanged since their last
 * successful upsert, upsert the rest (paced, bounded), then, only after a source read to its end
 * with no row rejected, deactivate the items the service lists as active that the source no longer
 * holds. Every step can be repeated: a killed run resumes from the start of its source, and what
 * was recorded is skipped, what was not is sent again (an upsert is idempotent).
 *
 * This file is the run's flow: the collection's lease, the attempt, the steps in order and how the
 * run ends. The steps: chunk.ts (reading the source), upsert.ts (the paced upserts),
 * deactivate.ts (--deactivate-missing); work.ts holds what they share.
 */
import type { RunnerContext } from '../context';
import { SourceError } from '../source';
import { readSource } from './chunk';
import { deactivateMissing } from './deactivate';
import { embeddingKey } from './contentHash';
import { keepCollection, overlapMessage, releaseCollection, takeCollection } from './lock';
import { findRun, finishRun, READING_COUNTS, SETTLED_RUN_STATES, type RunState } from './store';
import { RunStopped, RunWork } from './work';

export async function processRun(context: RunnerContext, runId: string): Promise<RunState | undefined> {
	const run = await findRun(context, runId);
	if (!run || SETTLED_RUN_STATES.includes(run.state)) return run?.state;
	const runKey = context.keys.reindex.run(run.collection, runId);
	const holder = await takeCollection(context, run.collection, runId);
	if (holder) {
		await finishRun(context, runId, 'skipped', {
			last_error: overlapMessage(context, run.collection, holder, run.origin),
		});
		context.log.warn({ run: runId, holder }, 'reindex run skipped: its collection is being synced by another run');
		return 'skipped';
	}
	// From here every way out releases the lease (finally), a Redis error included. The final state
	// is written after the release: whoever sees it may start the collection's next run at once.
	let attempt: number | undefined;
	let work: RunWork | undefined;
	let stopKeeping = () => undefined as void;
	let released = false;
	const letGo = async () => {
		if (released) return;
		released = true;
		stopKeeping();
		await releaseCollection(context, run.collection, runId);
	};
	try {
		attempt = await context.redis.hincrby(runKey, 'attempt', 1);
		work = new RunWork(context, run, attempt);
		const running = work;
		stopKeeping = keepCollection(context, run.collection, runId, () =>
			running.stop('another run took the collection: this run stopped'),
		);
		if (attempt > 1) {
			// A resumed run reads its source again from the start: its reading counts start again too.
			await context.redis
				.multi()
				.hset(runKey, Object.fromEntries(READING_COUNTS.map((name) => [name, 0])))
				.del(
					context.keys.reindex.rejected(run.collection, runId),
					context.keys.reindex.seen(run.collection, runId, attempt - 1),
					context.keys.reindex.missing(run.collection, runId, attempt - 1),
				)
				.exec();
			context.log.info({ run: runId, attempt }, 'reindex run resumed: reading its source again from the start');
		}
		await context.redis.hset(runKey, { state: 'running', started_at: run.startedAt ?? Date.now(), deactivation: '' });
		if (run.embedding)
			await context.redis.hset(
				context.keys.reindex.embeddings(run.collection),
				embeddingKey(run.embedding),
				JSON.stringify(run.embedding),
			);
		context.log.info({ run: runId, collection: run.collection, source: run.source }, 'reindex run started');

		await readSource(work);
		if (work.stopped) throw new RunStopped(work.stopped);
		const deactivation = await deactivateMissing(work);
		await work.pool.drain();
		if (work.stopped) throw new RunStopped(work.stopped);
		await letGo();
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
		await letGo();
		await finishRun(context, runId, 'failed', { last_error: reason, deactivation: current || deactivation });
		context.log.error({ run: runId, reason }, 'reindex run failed');
		return 'failed';
	} finally {
		await letGo();
		if (attempt !== undefined)
			await context.redis.del(
				context.keys.reindex.seen(run.collection, runId, attempt),
				context.keys.reindex.missing(run.collection, runId, attempt),
			);
	}
}
