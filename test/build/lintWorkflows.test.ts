// scripts/lint-workflows.mjs (part of `npm run lint`) checks the GitHub workflows, which cannot
// run here: the real ones pass, and a broken copy of the release workflow fails the lint.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const lint = (...files: string[]) =>
	spawnSync(process.execPath, [join(ROOT, 'scripts/lint-workflows.mjs'), ...files], {
		cwd: ROOT,
		encoding: 'utf8',
		timeout: 90_000,
	});

describe('scripts/lint-workflows.mjs', () => {
	it('passes ci.yml and release.yml', () => {
		const run = lint();
		expect(run.stdout).toContain('workflow ok: .github/workflows/ci.yml');
		expect(run.stdout).toContain('workflow ok: .github/workflows/release.yml');
		expect(run.status).toBe(0);
	});

	it.each([
		['a misspelt permission level', (text: string) => text.replace('\n  contents: read', '\n  contents: raed')],
		[
			'a step key that does not exist',
			(text: string) => text.replace('- uses: actions/checkout@', '- usess: actions/checkout@'),
		],
		[
			'a job key that does not exist',
			(text: string) => text.replace('runs-on: ubuntu-latest', 'runs_on: ubuntu-latest'),
		],
		['an unknown trigger', (text: string) => text.replace('  push:\n    tags:', '  pushed:\n    tags:')],
		// Caught by actionlint alone: the schema sees a string.
		['an expression left open', (text: string) => text.replace('${{ secrets.NPM_TOKEN }}', '${{ secrets.NPM_TOKEN }')],
		['a needs of a job that does not exist', (text: string) => text.replace('needs: build', 'needs: buidl')],
	])('fails on %s', (_what, breakIt) => {
		const dir = mkdtempSync(join(tmpdir(), 'convo-workflows-'));
		try {
			const original = readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8');
			const broken = breakIt(original);
			expect(broken).not.toBe(original);
			writeFileSync(join(dir, 'release.yml'), broken);
			const run = lint(join(dir, 'release.yml'));
			expect(run.status).toBe(1);
			expect(run.stderr).toContain('release.yml');
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
