/**
 * The reindex door: runs that keep a search collection in sync with a feed, their schedules and
 * reports (reindex/). Clients (http/, cli/) reach a domain only through its door in core/
 * (eslint.config.mjs).
 */
export {
	createReindex,
	DEFAULT_REINDEX_RATE,
	listReindexSchedules,
	pauseOrResumeReindexSchedule,
	removeReindexSchedule,
	type ReindexAnswer,
	type ReindexInput,
} from '../reindex/create';
export {
	listRuns as listReindexRuns,
	runOverview as reindexOverview,
	runStatus as reindexStatus,
	statusOf as reindexStatusOf,
	type RunOverview as ReindexOverview,
} from '../reindex/store';
export { reindexReport } from '../reindex/report';
export { API_REINDEX } from '../reindex/create';
export type { DryRunAnswer as ReindexDryRun } from '../reindex/dryRun';
export { SETTLED_RUN_STATES as SETTLED_REINDEX_STATES } from '../reindex/store';
