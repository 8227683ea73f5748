/**
 * The runners door: the runner processes themselves as a client sees them (alive on this Redis and
 * prefix, where one must run, the queues they work, the package's version). Clients (http/, cli/)
 * reach a domain only through its door in core/ (eslint.config.mjs).
 */
import type { RunnerContext } from '../context';
import { describeTarget } from '../redis';

export { shownQueueName } from '../jobs';

// Runner processes alive on this Redis and prefix (their heartbeats: presence.ts).
export { liveRunners } from '../presence';
/** The package's version, as `convo-runner --version` prints it and each runner's heartbeat carries it. */
export { version as RUNNER_VERSION } from '../../package.json';

/**
 * Where a runner process must run to take this context's work: its Redis (host and port, never a password) and prefix.
 */
export function runnerWhereabouts(context: RunnerContext): { redis: string; prefix: string } {
	return {
		redis: describeTarget({ url: context.config.REDIS_URL, clusterNodes: context.config.REDIS_CLUSTER_NODES }),
		prefix: context.keys.prefix,
	};
}

/** Every queue of the runner as the job registry lists them (what bull-board and /metrics show). */
export async function runnerQueues(context: RunnerContext) {
	return context.queues.all();
}
