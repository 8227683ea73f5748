/**
 * What globalSetup.ts made for this jest run, as the test files find it: the environment variables
 * it sets (the workers inherit them) and what they hold.
 */
import type { PrivateRedis } from '../../runner/src/devRedis';

/** The runner's bundle built for this run (its main.js). */
export const TEST_RUNNER_BUNDLE = 'CONVO_TEST_RUNNER_BUNDLE';
/** The sandbox's bundle built for this run (its cli.js). */
export const TEST_SANDBOX_BUNDLE = 'CONVO_TEST_SANDBOX_BUNDLE';
/** The URLs of the run's shared redis-servers, space-separated, one per jest worker. */
export const TEST_REDIS_URLS = 'CONVO_TEST_REDIS_URLS';
/** The URL of the slow lane's shared redis-server (laneRunner.ts). */
export const TEST_SERIAL_REDIS_URL = 'CONVO_TEST_SERIAL_REDIS_URL';
/** `serial` in the process where the slow lane's files run (laneRunner.ts); unset in the workers. */
export const TEST_LANE = 'CONVO_TEST_LANE';

export interface TestRunResources {
	folders: string[];
	servers: PrivateRedis[];
}

/**
 * The shared redis-server of this jest worker, or of the slow lane, which runs beside the workers;
 * undefined when the run has none (REDIS_URL set, or no globalSetup).
 */
export function workerRedisUrl(): string | undefined {
	if (process.env[TEST_LANE] === 'serial' && process.env[TEST_SERIAL_REDIS_URL])
		return process.env[TEST_SERIAL_REDIS_URL];
	const urls = process.env[TEST_REDIS_URLS]?.split(' ').filter(Boolean) ?? [];
	if (urls.length === 0) return undefined;
	// Workers are numbered from 1; a file run in band is worker 1.
	const worker = Number(process.env.JEST_WORKER_ID ?? 1);
	return urls[(worker - 1) % urls.length];
}
