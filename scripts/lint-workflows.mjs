// Validates the GitHub Actions workflows in .github/workflows/ with action-validator (its
// WebAssembly build from npm, @action-validator/core: no binary download): the workflow schema,
// and the globs in `paths` filters matching files of this checkout. They cannot run here, so this
// is what checks them before GitHub does.
//   node scripts/lint-workflows.mjs [file...]    (default: every .github/workflows/*.yml)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateWorkflow } from '@action-validator/core';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const dir = join(root, '.github/workflows');
const files = process.argv.length > 2
	? process.argv.slice(2).map((file) => resolve(file))
	: readdirSync(dir).filter((file) => /\.ya?ml$/.test(file)).sort().map((file) => join(dir, file));

let failed = 0;
for (const file of files) {
	const { errors } = validateWorkflow(readFileSync(file, 'utf8'));
	const name = relative(root, file);
	if (errors.length === 0) {
		console.log(`workflow ok: ${name}`);
		continue;
	}
	failed++;
	for (const error of errors) {
		const where = error.path ?? (error.location ? `line ${error.location.line}` : '');
		console.error(`${name}: ${error.title}${where ? ` at ${where}` : ''}${error.detail ? `: ${error.detail}` : ''}`);
	}
}
if (files.length === 0) {
	console.error('no workflow files found in .github/workflows');
	process.exit(1);
}
process.exit(failed ? 1 : 0);
