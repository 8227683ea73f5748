/**
 * `reindex run --dry-run`: the run's reading (chunk.ts) and, with --deactivate-missing, its count of
 * what would be deactivated and the wipe guard's verdict (deactivate.ts, wipeGuard.ts), done in the
 * asking process, writing nothing: no upsert or deactivation is sent, no run, item state, lease or
 * event is stored. The ids read are kept in this process's memory (a Map, about 100 bytes an id)
 * instead of the run's Redis hash, so a dry run of a million items holds about 100 MB.
 */
import type { RunnerContext } from '../context';
import { FieldError, UserError } from '../errors';
import type { SourceProgress } from '../source';
import { SourceError } from '../source';
import { forEachChunk, sortChunk } from './chunk';
import { guardDeactivation, rejectedRowsNote } from './deactivate';
import type { RunRecord, RunSettings } from './store';
import type { ReindexNames } from './names';
import { RunStopped, type CollectionScan } from './work';

/** Rejected rows a dry run's answer lists (the first, by line). */
const SHOWN_REJECTIONS = 100;

export interface DryRunAnswer {
	kind: 'dry_run';
	collection: string;
	/** What a run of this feed would do now: equal to a real run's counts when nothing changes in between. */
	counts: { read: number; created: number; updated: number; unchanged: number; deactivated: number; rejected: number };
	rejected_rows: Array<{ line: number; reason: string }>;
	/** What would become of --deactivate-missing, as a run's report says it. */
	deactivation: string;
	/** The wipe guard: null when nothing would be deactivated at all (no --deactivate-missing, or rejected rows). */
	wipe_protection: {
		active_items: number;
		would_deactivate: number;
		verdict: 'would pass' | 'would stop';
		reason: string;
	} | null;
}

export async function dryRunReindex(
	context: RunnerContext,
	settings: RunSettings,
	names: ReindexNames,
): Promise<DryRunAnswer> {
	const service = context.service;
	if (!service) throw new Error('a dry run needs the Convo service (this process has no service client)');
	const run: RunRecord = {
		...settings,
		id: 'dry-run',
		state: 'running',
		createdAt: Date.now(),
		attempt: 1,
		bytesRead: 0,
		counts: { read: 0, unchanged: 0, created: 0, updated: 0, deactivated: 0, rejected: 0, failed: 0 },
		mismatched: 0,
		foreign: 0,
	};
	const seen = new Map<string, number>();
	const scan: CollectionScan = {
		context,
		run,
		service,
		seenOf: async (ids) => ids.map((id) => seen.has(id)),
	};
	const itemsKey = context.keys.reindex.items(run.collection);
	const counts = { read: 0, created: 0, updated: 0, unchanged: 0, deactivated: 0, rejected: 0 };
	const rejections: DryRunAnswer['rejected_rows'] = [];
	const progress: SourceProgress = { read: 0 };
	try {
		await forEachChunk(scan, progress, async (chunk) => {
			const sorted = await sortChunk(run, chunk, async (ids, lines) => {
				const stored = await context.redis.hmget(itemsKey, ...ids);
				return ids.map((id, i) => {
					const first = seen.get(id);
					if (first === undefined) seen.set(id, lines[i]);
					return { firstLine: first === undefined ? null : String(first), stored: stored[i] };
				});
			});
			counts.read += chunk.length;
			counts.unchanged += sorted.unchanged;
			counts.rejected += sorted.rejections.length;
			// A forced item the service holds as sent answers `unchanged`, and a run counts it so.
			for (const upsert of sorted.toSend) counts[upsert.expected]++;
			rejections.push(...sorted.rejections.slice(0, SHOWN_REJECTIONS - rejections.length));
		});
	} catch (error) {
		// A real run with this source would fail the same way: the dry run says so instead of guessing counts.
		if (error instanceof SourceError)
			throw new FieldError(`${names.source} could not be read to its end: ${error.message}`, names.source);
		if (error instanceof RunStopped) throw new UserError(`the dry run stopped: ${error.message}`);
		throw error;
	}

	let deactivation = '';
	let guard: DryRunAnswer['wipe_protection'] = null;
	if (run.deactivateMissing && counts.rejected > 0) deactivation = rejectedRowsNote(counts.rejected);
	else if (run.deactivateMissing) {
		const verdict = await guardDeactivation(scan);
		guard = {
			active_items: verdict.active,
			would_deactivate: verdict.missing,
			verdict: verdict.passes ? 'would pass' : 'would stop',
			reason: verdict.text,
		};
		// A run that the guard stops deactivates nothing.
		counts.deactivated = verdict.passes ? verdict.missing : 0;
		deactivation = verdict.passes
			? `would be done: ${verdict.text}`
			: `would be withheld (the run would fail): ${verdict.text}`;
	} else deactivation = `not asked: ${names.deactivateMissing} was not given`;
	return {
		kind: 'dry_run',
		collection: run.collection,
		counts,
		rejected_rows: rejections,
		deactivation,
		wipe_protection: guard,
	};
}
