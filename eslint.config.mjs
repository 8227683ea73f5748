// Ordinary TypeScript rules for everything that is not the node pack: the sandbox, the runner,
// tests, benchmarks and scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
	{ ignores: ['**/dist/**', '**/node_modules/**'] },
	js.configs.recommended,
	...tseslint.configs.recommended,
	{
		files: ['**/*.js', '**/*.cjs'],
		languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', process: 'readonly' } },
	},
	{
		// The runner's console runs in the browser as a plain script.
		files: ['runner/src/http/console/**/*.js'],
		languageOptions: {
			sourceType: 'script',
			globals: { window: 'readonly', document: 'readonly', fetch: 'readonly', location: 'readonly', setInterval: 'readonly', clearInterval: 'readonly' },
		},
	},
	{
		languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
		rules: {
			'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
		},
	},
);
