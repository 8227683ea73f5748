/**
 * What a runner command loads and keeps to start: a command that serves no API loads none of the
 * API's stack (fastify, bull-board, prom-client), and the installed runner (its bin beside the
 * bundle) keeps Node's compile cache in the system's temporary folder, and none when it is turned off.
 * Start-up time itself is benchmark 6's (bench/startup.bench.ts), not a test's.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { layOutInstalledRunner, RUNNER_ARGS } from './support';
import { TEST_RUNNER_BUNDLE } from '../support/testRun';

jest.setTimeout(60_000);

let work: string;
beforeEach(() => {
	work = mkdtempSync(join(tmpdir(), 'convo-runner-startup-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** Every file under `dir`, however deep. */
const filesUnder = (dir: string): string[] =>
	readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter((entry) => entry.isFile())
		.map((entry) => entry.name);

test('a command that serves no API loads none of its stack', () => {
	// A preload that writes, as the process exits, every module file it loaded.
	const preload = join(work, 'loaded.cjs');
	const listed = join(work, 'loaded.txt');
	writeFileSync(
		preload,
		`process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listed)}, Object.keys(require.cache).join('\\n')));`,
	);
	const run = spawnSync(process.execPath, ['--require', preload, ...RUNNER_ARGS, '--help'], {
		encoding: 'utf8',
		env: { PATH: process.env.PATH, NODE_DISABLE_COMPILE_CACHE: '1' },
	});
	expect(run.status).toBe(0);
	const loaded = readFileSync(listed, 'utf8');
	// The preload itself worked: the CLI's own dependencies are there.
	expect(loaded).toMatch(/node_modules\/(bullmq|commander)\//);
	for (const stack of ['fastify', '@bull-board', 'prom-client'])
		expect({ stack, loaded: loaded.includes(`node_modules/${stack}/`) }).toEqual({ stack, loaded: false });
});

test('the installed runner keeps a compile cache in the temporary folder, and none when it is turned off', () => {
	const bundle = process.env[TEST_RUNNER_BUNDLE];
	if (!bundle) throw new Error('no runner bundle: the test run builds one (test/support/globalSetup.ts)');
	const bin = layOutInstalledRunner(join(work, 'package'), dirname(bundle));
	// Its default place, the system's temporary folder (NODE_COMPILE_CACHE would turn the cache on by itself).
	const temporary = join(work, 'tmp');
	mkdirSync(temporary);
	const cache = join(temporary, 'node-compile-cache');
	const version = (extraEnv: NodeJS.ProcessEnv) =>
		spawnSync(bin, ['--version'], {
			encoding: 'utf8',
			env: { PATH: process.env.PATH, TMPDIR: temporary, ...extraEnv },
		});

	const off = version({ NODE_DISABLE_COMPILE_CACHE: '1' });
	expect(off.stderr).toBe('');
	expect(off.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
	expect(() => filesUnder(cache)).toThrow(/ENOENT/);

	const on = version({});
	expect(on.stderr).toBe('');
	expect(on.stdout).toBe(off.stdout);
	// The bundle and its dependencies, compiled.
	expect(filesUnder(cache).length).toBeGreaterThan(10);
});
