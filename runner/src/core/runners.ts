/**
 * The runners door: the runner processes themselves as a client sees them (alive on this Redis and
 * prefix, where one must run, the queues they work, the package's version). Clients (http/, cli/)
 * reach a domain only through its door in core/ (eslint.config.mjs).
 */
import type { RunnerContext } from '../context';
import { shownQueueName } from '../jobs';
import { liveRunners } from '../presence';
import { describeTarget } from '../redis';

export { shownQueueName };

// Runner processes alive on this Redis and prefix (their heartbeats: presence.ts).
export { liveRunners };
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

/** A queue's jobs by state now, as an operator reads a queue's depth. */
export interface QueueDepth {
	/** As bull-board and the heartbeats name it: `control`, `send-<number>`. */
	name: string;
	/** Jobs waiting for a worker (or for the queue to be resumed), prioritized ones included. */
	waiting: number;
	active: number;
	/** Waiting for their time: a retry's backoff, a scheduled start, a send held by the number's rate. */
	delayed: number;
	/** Failed jobs kept to look at, and finished ones kept a while (each kind keeps its own number). */
	failed: number;
	completed: number;
	paused: boolean;
	/** Runner processes alive whose workers take this queue's jobs. */
	runners: number;
}

/** Every queue's depth, with how many live processes work it: the shared queues, then each number's. */
export async function queueDepths(context: RunnerContext): Promise<QueueDepth[]> {
	const [queues, alive] = await Promise.all([runnerQueues(context), liveRunners(context)]);
	return Promise.all(
		queues.map(async (queue) => {
			const name = shownQueueName(queue.name);
			const [counts, paused] = await Promise.all([
				queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'),
				queue.isPaused(),
			]);
			return {
				name,
				waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
				active: counts.active ?? 0,
				delayed: counts.delayed ?? 0,
				failed: counts.failed ?? 0,
				completed: counts.completed ?? 0,
				paused,
				runners: alive.filter((runner) => runner.queues.includes(name)).length,
			};
		}),
	);
}
