/** The names of a reindex run's settings as each client spells them, a leaf the run's modules share. */
import type { SourceOrigin } from '../localFiles';

/** The settings of a run as each client names them: errors and reasons use its names. */
export type ReindexNames = Record<
	| 'collection'
	| 'source'
	| 'format'
	| 'idField'
	| 'embedding'
	| 'deactivateMissing'
	| 'force'
	| 'maxDeactivate'
	| 'forceDeactivate'
	| 'dryRun'
	| 'rate'
	| 'cron'
	| 'tz',
	string
>;

export const REINDEX_NAMES: Readonly<Record<SourceOrigin, ReindexNames>> = {
	cli: {
		collection: '--collection',
		source: '--source',
		format: '--format',
		idField: '--id-field',
		embedding: '--embedding-json',
		deactivateMissing: '--deactivate-missing',
		force: '--force',
		maxDeactivate: '--max-deactivate',
		forceDeactivate: '--force-deactivate',
		dryRun: '--dry-run',
		rate: '--rate',
		cron: '--cron',
		tz: '--tz',
	},
	api: {
		collection: 'collection_id',
		source: 'source',
		format: 'format',
		idField: 'id_field',
		embedding: 'embedding_json',
		deactivateMissing: 'deactivate_missing',
		force: 'force',
		maxDeactivate: 'max_deactivate',
		forceDeactivate: 'force_deactivate',
		dryRun: 'dry_run',
		rate: 'rate',
		cron: 'cron',
		tz: 'tz',
	},
};
