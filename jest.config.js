/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	// Transpile only (tsconfig has isolatedModules): type checking is `npm run typecheck`'s job.
	transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
	// Workflow and sandbox tests start HTTP servers; a slow 2-core CI machine needs headroom.
	testTimeout: 30000,
	reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
