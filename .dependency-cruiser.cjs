// Import cycles in the runner, the sandbox and the contract, type imports counted: a type-only
// cycle still ties the files' designs together, and tsPreCompilationDeps makes the cruiser see
// imports the TypeScript compiler would erase.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
	forbidden: [
		{
			name: 'no-circular',
			severity: 'error',
			comment: 'This import closes a cycle: move the shared piece down (a module both sides import) instead.',
			from: {},
			to: { circular: true },
		},
	],
	options: {
		tsPreCompilationDeps: true,
		tsConfig: { fileName: 'tsconfig.json' },
		doNotFollow: { path: 'node_modules' },
		// The contract is reached by its package name from the runner and the sandbox; its cycles are
		// found when it is cruised itself (packages/n8n-nodes-convo/nodes/shared, packages/contract).
		exclude: { path: '(^|/)node_modules/' },
	},
};
