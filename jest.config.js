/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] },
	// Workflow and sandbox tests start HTTP servers; a slow 2-core CI machine needs headroom.
	testTimeout: 30000,
	reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
