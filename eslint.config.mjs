// Ordinary TypeScript rules for everything that is not the node pack: the sandbox, the runner,
// tests, benchmarks and scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The domain doors in runner/src/core/: a client reaches a domain's use cases, stores and Redis only through its door.
 */
const DOORS = ['campaigns', 'audience', 'reindex', 'webhooks', 'runners'].map((domain) => `core/${domain}`);
const CLIENT_MAY_IMPORT = [...DOORS, 'config', 'log', 'runtime', 'limits', 'errors'];

/** The repository's production code, held to 120 columns below; tests and benchmarks are not. */
const PRODUCTION = [
	'runner/src/**/*.{ts,js}',
	'runner/scripts/**/*.{ts,js,mjs}',
	'sandbox/src/**/*.ts',
	'packages/contract/**/*.ts',
	'packages/n8n-nodes-convo/{nodes,credentials}/**/*.ts',
	'scripts/**/*.{ts,js,mjs,cjs}',
	'compose/**/*.{ts,js,mjs,cjs}',
	'eslint.config.mjs',
	'jest.config.js',
	'.dependency-cruiser.cjs',
];

/** The import rule of a runner client (see its use below); `also`: modules this file may import besides. */
function clientBoundary(files, also = []) {
	const allowed = [...CLIENT_MAY_IMPORT, ...also].map((name) => name.replace(/[/.]/g, '\\$&')).join('|');
	const why =
		'a runner client (http/, cli/) reaches a domain only through its door in core/ (campaigns, audience, ' +
		'reindex, webhooks, runners); give the door the use case instead ' +
		'(eslint.config.mjs lists what else a client may import)';
	return [
		{
			files: [files],
			rules: {
				'@typescript-eslint/no-restricted-imports': [
					'error',
					{
						patterns: [
							{ regex: `^\\.\\./(?!(?:${allowed}|context)$)`, message: why },
							{
								regex: '^\\.\\./context$',
								allowTypeImports: true,
								message: `${why}; context.ts: types only (the errors are in errors.ts)`,
							},
						],
					},
				],
			},
		},
	];
}

export default tseslint.config(
	{ ignores: ['**/dist/**', '**/node_modules/**'] },
	js.configs.recommended,
	...tseslint.configs.recommended,
	{
		files: ['**/*.js', '**/*.cjs'],
		languageOptions: {
			sourceType: 'commonjs',
			globals: { module: 'writable', require: 'readonly', process: 'readonly' },
		},
	},
	{
		// Jest loads its config and reporters with require(): CommonJS, as Node runs it.
		files: ['jest.config.js', 'test/support/summary-reporter.js'],
		languageOptions: { globals: { __dirname: 'readonly' } },
		rules: { '@typescript-eslint/no-require-imports': 'off' },
	},
	{
		// The runner's console runs in the browser as a plain script.
		files: ['runner/src/http/console/**/*.js'],
		languageOptions: {
			sourceType: 'script',
			globals: {
				window: 'readonly',
				document: 'readonly',
				fetch: 'readonly',
				location: 'readonly',
				setInterval: 'readonly',
				clearInterval: 'readonly',
				setTimeout: 'readonly',
				clearTimeout: 'readonly',
				URLSearchParams: 'readonly',
			},
		},
	},
	// One door per domain (runner/src/core/campaigns, audience, reindex, webhooks, runners): the
	// runner's clients (http/, cli/) reach a domain's use cases and stores only through its door,
	// never a store, a domain folder or Redis directly. Besides the doors they may import:
	//   config, log   - settings and logging every process has;
	//   runtime       - opening and closing a context, running a process, checking Redis before it;
	//   context       - types only (RunnerContext);
	//   errors        - UserError and its kinds, the 400/404/409 a client answers with (a leaf module);
	//   limits        - LimitError, the 408/413/429 a client answers with;
	// their own folder, libraries and convo-contract. Exceptions, each for one file, follow below.
	...clientBoundary('runner/src/http/**/*.ts'),
	...clientBoundary('runner/src/cli/**/*.ts'),
	// The console's sessions and failed-token counts are the HTTP client's own state (no other
	// client has them), kept in Redis so every process agrees: auth.ts runs its scripts itself.
	...clientBoundary('runner/src/http/auth.ts', ['redisScripts']),
	// `start` serves the control API: the CLI starts the HTTP client, which itself goes through the doors.
	...clientBoundary('runner/src/cli/serve.ts', ['http/server']),
	{
		// Production code at Prettier's width (a tab is 2 columns), comments included: Prettier wraps
		// code but never a comment or a string, so a line it leaves long fails here. The node pack's
		// files are held to it from this config, not the pack's own: n8n's cloud verification wants the
		// pack's eslint.config.mjs exactly as n8n-node writes it (scripts/check-pack-alone.sh).
		// runner/src/lua is held to it by test/build/noLuaInTypeScript.test.ts (ESLint reads no Lua).
		files: PRODUCTION,
		rules: { 'max-len': ['error', { code: 120, tabWidth: 2, comments: 120 }] },
	},
	{
		languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
		rules: {
			'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
		},
	},
);
