/**
 * Run before each test file (jest.config.js `setupFiles`): in a fast-lane worker, lowers the
 * process's priority to nice 10, which every process it starts inherits, so the slow lane's timing
 * files, running at normal priority beside it, get the CPU first (laneRunner.ts): about nine tenths
 * of a core both want. Not 19: at a seventieth of a core a fast file could wait past a bound of its
 * own while the slow lane is busy (n8n-workflow gives a regular expression 250 ms). Setting the same
 * value again for the worker's next file changes nothing.
 */
import { setPriority } from 'node:os';

import { TEST_LANE } from './testRun';

const FAST_LANE_NICE = 10;

if (process.env[TEST_LANE] !== 'serial') setPriority(FAST_LANE_NICE);
