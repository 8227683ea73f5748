const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Two projects. `slow`: test files that start a runner process, a redis-server, a browser or the
 * sandbox as a process of its own (a file that names one of the helpers below); they run one at a
 * time, because their rate and timing checks measure wall time on a machine they would otherwise
 * share. `fast`: everything else (contract, sandbox in-process, node workflows through n8n-core,
 * trigger, unit tests of runner modules), spread over the workers.
 *   npm test                              # both
 *   npm test -- --selectProjects fast     # the quick loop
 */
const STARTS_PROCESSES = /\b(useRunnerUnderTest|startRunnerUnderTest|useRedisServer|startPrivateRedis|startRedisCluster|spawnRunner|startSandboxProcess|RUNNER_BIN|chromium|startDevEnvironment)\b/;

function testFiles(dir) {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
		return entry.name.endsWith('.test.ts') ? [path] : [];
	});
}

const slowFiles = testFiles(join(__dirname, 'test')).filter((path) => STARTS_PROCESSES.test(readFileSync(path, 'utf8')));

const shared = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	// Transpile only (tsconfig has isolatedModules): type checking is `npm run typecheck`'s job.
	transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
};

/** @type {import('jest').Config} */
module.exports = {
	// Every core for the fast project (jest's default leaves one free, which on 2 cores is one worker
	// and so no parallelism at all); the slow project is serial whatever this says (its runner).
	maxWorkers: '100%',
	// Workflow and sandbox tests start HTTP servers; a slow 2-core CI machine needs headroom. (A
	// global option: in a project's settings jest would ignore it.)
	testTimeout: 30000,
	reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
	// The runner and sandbox bundles the spawned processes run, and one shared redis-server per worker.
	globalSetup: '<rootDir>/test/support/globalSetup.ts',
	globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
	projects: [
		{
			...shared,
			displayName: 'fast',
			testMatch: ['**/*.test.ts'],
			testPathIgnorePatterns: ['/node_modules/', ...slowFiles.map((path) => `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)],
		},
		{
			...shared,
			displayName: 'slow',
			testMatch: slowFiles,
			runner: '<rootDir>/test/support/serialRunner.ts',
		},
	],
};
