/**
 * Run before each test file (jest.config.js `setupFiles`): in a fast-lane worker, lowers the
 * process's priority to the lowest (nice 19), which every process it starts inherits, so the slow
 * lane's timing files, running at normal priority beside it, get the CPU first (laneRunner.ts).
 * Setting the same value again for the worker's next file changes nothing.
 */
import { setPriority } from 'node:os';

import { TEST_LANE } from './testRun';

if (process.env[TEST_LANE] !== 'serial') setPriority(19);
