/**
 * The runner of both jest projects (jest.config.js). One runner, so jest hands it every test file
 * at once, and it runs two lanes side by side instead of one project after the other:
 * - the `slow` project's files (a bound they measure in wall time) one at a time, in this process,
 *   at the machine's normal priority, with a redis-server of their own;
 * - the `fast` project's files spread over the workers, which lower their own priority first
 *   (lane.ts), and so that of every process they start (runners, sandboxes, redis-servers,
 *   browsers inherit it).
 * Linux gives a waiting process of normal priority the CPU before any of the lowered ones, so a
 * timing file sees the machine as if it ran alone, while the fast lane uses what it leaves: the
 * timing files mostly wait out rates and windows. `--runInBand` (or a single file) runs every file
 * in this process, one at a time, nothing lowered.
 */
import type { Config } from '@jest/types';
import TestRunner from 'jest-runner';

import { TEST_LANE } from './testRun';

type RunTests = TestRunner['runTests'];

const isSlow = (test: Parameters<RunTests>[0][number]) =>
	(test.context.config as Config.ProjectConfig).displayName?.name === 'slow';

export default class LaneRunner extends TestRunner {
	override async runTests(...[tests, watcher, options]: Parameters<RunTests>): ReturnType<RunTests> {
		const slow = tests.filter(isSlow);
		const fast = tests.filter((test) => !isSlow(test));
		if (options.serial) {
			process.env[TEST_LANE] = 'serial';
			return super.runTests([...fast, ...slow], watcher, options);
		}
		// The workers are forked inside this call, before it returns its promise: they do not inherit
		// the lane set below, which marks this process (where the slow files run) only.
		const fastLane = fast.length > 0 ? super.runTests(fast, watcher, options) : undefined;
		process.env[TEST_LANE] = 'serial';
		const slowLane = slow.length > 0 ? super.runTests(slow, watcher, { ...options, serial: true }) : undefined;
		await Promise.all([fastLane, slowLane]);
	}
}
