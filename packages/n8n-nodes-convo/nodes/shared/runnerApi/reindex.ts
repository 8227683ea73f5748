/**
 * A reindex run over the runner's control API (/api/reindex): the start's body (a run, a schedule
 * with cron, or a dry run) and the answers the node reads.
 */
import { z } from 'zod/v4';

import { runnerRate } from './common';

/** POST /api/reindex. */
export const startReindexBody = z.object({
	collection_id: z.uuid({ error: 'must be the UUID of a search collection' }),
	/** An http(s) URL, or a file inside RUNNER_SOURCE_DIR (a relative path is taken from it). */
	source: z.string(),
	format: z.enum(['json', 'ndjson', 'csv']).optional(),
	id_field: z.string().min(1, { error: 'must name the field that holds each item id' }),
	embedding_json: z.record(z.string(), z.unknown()).optional(),
	deactivate_missing: z.boolean().optional(),
	force: z.boolean().optional(),
	/**
	 * With deactivate_missing: "10%" of the collection's active items (the default) or a number of
	 * items; more stops the run before it deactivates. The runner checks the value.
	 */
	max_deactivate: z.union([z.string(), z.number()]).optional(),
	/** With deactivate_missing: deactivate however many that is. */
	force_deactivate: z.boolean().optional(),
	/** Answer what a run would do (counts, rejected rows, the wipe guard's verdict), writing nothing. */
	dry_run: z.boolean().optional(),
	rate: runnerRate('upsert').optional(),
	cron: z.string().optional(),
	tz: z.string().optional(),
});
export type StartReindexBody = z.input<typeof startReindexBody>;

/** A reindex run's status (GET /api/reindex/:id, and POST /api/reindex with kind "run"). */
export const reindexRunAnswer = z.looseObject({
	id: z.string(),
	state: z.string(),
	counts: z.record(z.string(), z.number()),
});
export type ReindexRunAnswer = z.infer<typeof reindexRunAnswer>;

/** POST /api/reindex: a run, with cron a schedule, or with dry_run what a run would do. */
export const startReindexAnswer = z.union([
	reindexRunAnswer.extend({ kind: z.literal('run') }),
	z.looseObject({ kind: z.literal('dry_run'), counts: z.record(z.string(), z.number()), deactivation: z.string() }),
	z.looseObject({ kind: z.literal('schedule'), schedule: z.looseObject({ id: z.string() }) }),
]);
export type StartReindexAnswer = z.infer<typeof startReindexAnswer>;
