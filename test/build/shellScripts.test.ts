// The repository's shell scripts (every tracked *.sh, and .ci/run) name their shell on the first
// line and pass shellcheck at warning level (.shellcheckrc beside package.json; .ci/run installs
// Debian's shellcheck, as it does redis-server).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

jest.setTimeout(120_000);

const ROOT = resolve(__dirname, '../..');
const scripts = execFileSync('git', ['ls-files', '-z', '--', '*.sh', '.ci/run'], { cwd: ROOT, encoding: 'utf8' })
	.split('\0')
	.filter(Boolean)
	.sort();

test('the scripts are found', () => {
	expect(scripts).toEqual(expect.arrayContaining(['.ci/run', 'test/e2e/live.sh', 'test/e2e/run.sh']));
});

test('each script starts with a shebang naming its shell', () => {
	const withoutShell = scripts.filter(
		(file) =>
			!/^#!(\/usr\/bin\/env (ba)?sh|\/bin\/(ba)?sh)\b/.test(readFileSync(join(ROOT, file), 'utf8').split('\n')[0]),
	);
	expect(withoutShell).toEqual([]);
});

test('shellcheck finds nothing at warning level or above', () => {
	const version = spawnSync('shellcheck', ['--version'], { encoding: 'utf8' });
	if (version.error) throw new Error('shellcheck is not installed: apt-get install shellcheck (.ci/run does)');
	const run = spawnSync('shellcheck', ['--external-sources', '--severity=warning', '--format=gcc', ...scripts], {
		cwd: ROOT,
		encoding: 'utf8',
		timeout: 100_000,
	});
	expect(run.stdout + run.stderr).toBe('');
	expect(run.status).toBe(0);
});
