// What `npm pack -w convo-runner` puts in the runner's tarball: README.md and LICENSE beside the
// bin, and never a tarball without the built bundle. npm packs whatever is there, and the
// repository's .npmrc turns lifecycle scripts (the package's `prepack`) off, so the check runs both
// as `prepack` and first in `npm run pack:runner`: both are tried here on a copy of the package,
// with and without a bundle, in a workspace whose .npmrc turns scripts off as the repository's does.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

jest.setTimeout(120_000);

const ROOT = resolve(__dirname, '../..');
const RUNNER = join(ROOT, 'runner');
const npm = (args: string[], cwd: string) => spawnSync('npm', args, { cwd, encoding: 'utf8', timeout: 60_000 });
const packedFiles = (stdout: string) =>
	(JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.map((file) => file.path).sort();

let work: string;
beforeEach(() => {
	work = mkdtempSync(join(tmpdir(), 'convo-runner-pack-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** The runner's package as the repository has it before a build, in a workspace like the repository's. */
function unbuiltWorkspace(): string {
	const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
	writeFileSync(
		join(work, 'package.json'),
		JSON.stringify({
			name: 'workspace',
			private: true,
			workspaces: ['runner'],
			scripts: { 'pack:runner': rootManifest.scripts['pack:runner'] },
		}),
	);
	cpSync(join(ROOT, '.npmrc'), join(work, '.npmrc'));
	for (const part of ['package.json', 'bin', 'scripts', 'README.md', 'LICENSE'])
		cpSync(join(RUNNER, part), join(work, 'runner', part), { recursive: true });
	return join(work, 'runner');
}

test('npm pack -w convo-runner --dry-run lists README.md and LICENSE, the root LICENSE unchanged', () => {
	const run = npm(['pack', '-w', 'convo-runner', '--dry-run', '--json', '--silent'], ROOT);
	expect(run.status).toBe(0);
	expect(packedFiles(run.stdout)).toEqual(
		expect.arrayContaining(['LICENSE', 'README.md', 'bin/convo-runner.mjs', 'package.json']),
	);
	expect(readFileSync(join(RUNNER, 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
	expect(readFileSync(join(RUNNER, 'README.md'), 'utf8')).toContain(
		'https://github.com/convo-for-n8n/n8n-nodes-convo#the-runner-convo-runner',
	);
});

test('packing without the built bundle fails, naming what is missing, with lifecycle scripts on or off', () => {
	const runner = unbuiltWorkspace();
	const expected =
		'missing dist/main.js, dist/console/index.html, dist/lua/lock/takeLock-1.lua. Build the bundle first: npm run build -w convo-runner';

	// Scripts off, as the repository's .npmrc has them: the root's pack script checks first.
	const packScript = npm(['run', '--silent', 'pack:runner', '--', '--dry-run'], work);
	expect({ status: packScript.status, stderr: packScript.stderr }).toEqual({
		status: 1,
		stderr: expect.stringContaining(expected),
	});

	// Scripts on (an npm with the default config): the package's prepack checks.
	const prepack = npm(['pack', '--dry-run', '--ignore-scripts=false'], runner);
	expect({ status: prepack.status, stderr: prepack.stderr }).toEqual({
		status: 1,
		stderr: expect.stringContaining(expected),
	});
});

test('with the bundle in place, the pack script packs it with README.md and LICENSE', () => {
	const runner = unbuiltWorkspace();
	mkdirSync(join(runner, 'dist', 'console'), { recursive: true });
	writeFileSync(join(runner, 'dist', 'main.js'), '');
	writeFileSync(join(runner, 'dist', 'console', 'index.html'), '');
	mkdirSync(join(runner, 'dist', 'lua', 'lock'), { recursive: true });
	writeFileSync(join(runner, 'dist', 'lua', 'lock', 'takeLock-1.lua'), '');
	const run = npm(['run', '--silent', 'pack:runner', '--', '--dry-run', '--json'], work);
	expect(run.status).toBe(0);
	expect(packedFiles(run.stdout)).toEqual([
		'LICENSE',
		'README.md',
		'bin/convo-runner.mjs',
		'dist/console/index.html',
		'dist/lua/lock/takeLock-1.lua',
		'dist/main.js',
		'package.json',
	]);
	const prepack = npm(['pack', '--dry-run', '--ignore-scripts=false'], runner);
	expect(prepack.status).toBe(0);
});
