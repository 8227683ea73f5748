const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Two projects. `slow`: the test files whose first line says why they must have the machine to
 * themselves, `// @serial: <reason>`: a bound they measure in wall time (a send rate in every
 * sliding second, how soon something happens, how long a timeout takes) that a busy machine could
 * break; they run one at a time, after the rest. `fast`: everything else, spread over the workers,
 * real processes included (runners, sandboxes, redis-servers, browsers), SIGKILLs and Redis
 * restarts too: what survives a kill is counted, and a busy machine only makes the count arrive
 * later. A bound load cannot break (a retry waits at least its backoff) is no reason to be serial.
 *   npm test                              # both
 *   npm test -- --selectProjects fast     # the quick loop
 */
const SERIAL_MARKER = /^\/\/ @serial: (.*)/;

function testFiles(dir) {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
		return entry.name.endsWith('.test.ts') ? [path] : [];
	});
}

function isSerial(path) {
	const text = readFileSync(path, 'utf8');
	const marker = SERIAL_MARKER.exec(text.slice(0, text.indexOf('\n')));
	if (marker && !marker[1].trim()) throw new Error(`${path}: "// @serial:" without its reason`);
	if (!marker && /^\s*\/\/\s*@serial\b/m.test(text))
		throw new Error(`${path}: "// @serial: <reason>" must be the file's first line`);
	return Boolean(marker);
}

const slowFiles = testFiles(join(__dirname, 'test')).filter(isSerial);

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
			testPathIgnorePatterns: [
				'/node_modules/',
				...slowFiles.map((path) => `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
			],
		},
		{
			...shared,
			displayName: 'slow',
			testMatch: slowFiles,
			runner: '<rootDir>/test/support/serialRunner.ts',
		},
	],
};
