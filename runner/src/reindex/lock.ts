/**
 * One run per collection at a time: a lease in Redis holding the run's id. `reindex run` takes it
 * at create, the run's processor takes it again (same id: it may) and renews it while it lives;
 * a killed process stops renewing, so the lease ends RUNNER_REINDEX_LEASE later and whichever process resumes
 * the run takes it back. A second run of the collection is refused while the lease is held.
 */
import { RUNNER_ROUTES } from 'convo-contract';

import type { RunnerContext } from '../context';
import type { SourceOrigin } from '../localFiles';
import { keepLock, releaseLock, takeLock } from '../lock';

/** Takes the collection for `runId`; answers the run that holds it instead, if another does. */
export async function takeCollection(
	context: RunnerContext,
	collection: string,
	runId: string,
): Promise<string | undefined> {
	return takeLock(context.redis, context.keys.reindex.lock(collection), runId, context.config.RUNNER_REINDEX_LEASE);
}

export async function releaseCollection(context: RunnerContext, collection: string, runId: string): Promise<void> {
	await releaseLock(context.redis, context.keys.reindex.lock(collection), runId);
}

/** Renews the lease until stopped; `onLost` is called if another run took the collection meanwhile. */
export function keepCollection(
	context: RunnerContext,
	collection: string,
	runId: string,
	onLost: () => void,
): () => void {
	return keepLock(context.redis, context.keys.reindex.lock(collection), runId, context.config.RUNNER_REINDEX_LEASE, {
		lost: onLost,
		error: (error) => context.log.warn({ run: runId, err: error.message }, 'could not renew the collection lease'),
	});
}

/** How a client follows a run: its own command or route, never the other client's. */
const FOLLOW_RUN: Record<SourceOrigin, (id: string) => string> = {
	cli: (id) => `reindex status ${id} --wait`,
	api: (id) => `${RUNNER_ROUTES.getReindexRun.method} ${RUNNER_ROUTES.getReindexRun.path.replace(':id', id)}`,
};

/** Why a run of the collection cannot start, said to `origin`, the client that asked for it. */
export const overlapMessage = (context: RunnerContext, collection: string, holder: string, origin: SourceOrigin) =>
	`collection ${collection} is being synced by run ${holder}: two runs of one collection never overlap. ` +
	`Wait for it (${FOLLOW_RUN[origin](holder)}); if its process died, ` +
	`its lease ends within ${context.config.RUNNER_REINDEX_LEASE / 1000} s and a runner resumes it.`;
