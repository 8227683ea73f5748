/**
 * A run's report, one JSON document: settings, state, counts, what became of --deactivate-missing
 * (deactivate_missing) and why, named as the client that asked for the run calls it, and the notes
 * kept (the first KEEP_NOTES of each list): rejected rows with their line, failed upserts, answers
 * other than expected, active items the runner never sent.
 */
import type { RunnerContext } from '../context';
import { KEEP_NOTES } from './work';
import { getRun, runOverview, type RunOverview } from './store';
import { REINDEX_NAMES } from './names';
import { isoOrNull } from '../isoTime';

export interface ReindexReport extends RunOverview {
	source: string;
	/** Who named the source: `api` (a local file only inside RUNNER_SOURCE_DIR) or `cli` (any path). */
	origin: 'api' | 'cli';
	format: string;
	id_field: string;
	deactivate_missing: boolean;
	force: boolean;
	rate_limit: number;
	created_at: string;
	started_at: string | null;
	finished_at: string | null;
	rejected_rows: Array<{ line: number; reason: string }>;
	failures: Array<{ external_id: string; line: number | null; error: string }>;
	mismatches: Array<{ external_id: string; line: number | null; expected: string; got: string }>;
	foreign_items: string[];
	/** Set when a list holds only the first KEEP_NOTES notes. */
	notes_truncated: boolean;
}

export async function reindexReport(context: RunnerContext, id: string): Promise<ReindexReport> {
	const run = await getRun(context, id);
	const status = await runOverview(context, id);
	const [rejected, problems] = await Promise.all([
		context.redis.lrange(context.keys.reindex.rejected(run.collection, id), 0, -1),
		context.redis.lrange(context.keys.reindex.problems(run.collection, id), 0, -1),
	]);
	const notes = problems.map((text) => JSON.parse(text) as Record<string, unknown>);
	const ofKind = (...kinds: string[]) => notes.filter((note) => kinds.includes(String(note.kind)));
	return {
		...status,
		deactivation:
			status.deactivation ??
			(run.deactivateMissing ? null : `not asked: ${REINDEX_NAMES[run.origin].deactivateMissing} was not given`),
		source: run.source,
		origin: run.origin,
		format: run.format,
		id_field: run.idField,
		deactivate_missing: run.deactivateMissing,
		force: run.force,
		rate_limit: run.rate,
		created_at: isoOrNull(run.createdAt) as string,
		started_at: isoOrNull(run.startedAt),
		finished_at: isoOrNull(run.finishedAt),
		rejected_rows: rejected.map((text) => JSON.parse(text) as { line: number; reason: string }),
		failures: ofKind('failed', 'deactivation failed').map((note) => ({
			external_id: String(note.external_id),
			line: (note.line as number | null) ?? null,
			error: String(note.error),
		})),
		mismatches: ofKind('mismatch').map((note) => ({
			external_id: String(note.external_id),
			line: (note.line as number | null) ?? null,
			expected: String(note.expected),
			got: String(note.got),
		})),
		foreign_items: ofKind('foreign').map((note) => String(note.external_id)),
		notes_truncated: rejected.length >= KEEP_NOTES || problems.length >= KEEP_NOTES,
	};
}
