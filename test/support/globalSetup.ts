/**
 * Once per jest run, before any test file: builds the runner's bundle and a bundle of the sandbox
 * into a folder of this run's own (spawned runners and sandboxes start from them in about a third
 * of the time the sources through tsx take), and starts one redis-server per jest worker, which the
 * tests that need only Redis share under key prefixes of their own. Both reach the test files
 * through the environment the workers inherit; globalTeardown.ts stops and removes them.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { build } from 'esbuild';

import { startPrivateRedis } from '../../runner/src/devRedis';
import {
	TEST_REDIS_URLS,
	TEST_RUNNER_BUNDLE,
	TEST_SANDBOX_BUNDLE,
	TEST_SERIAL_REDIS_URL,
	type TestRunResources,
} from './testRun';

const ROOT = join(__dirname, '..', '..');
const sandboxManifest = JSON.parse(readFileSync(join(ROOT, 'sandbox', 'package.json'), 'utf8')) as {
	dependencies: Record<string, string>;
};
const SANDBOX_EXTERNALS = new Set([...Object.keys(sandboxManifest.dependencies), 'zod']);
SANDBOX_EXTERNALS.delete('convo-contract');

/** The sandbox's sources as one file, its imports found in the repository's node_modules. */
async function buildSandbox(outfile: string): Promise<void> {
	await build({
		entryPoints: [join(ROOT, 'sandbox', 'src', 'cli.ts')],
		outfile,
		bundle: true,
		platform: 'node',
		format: 'cjs',
		target: 'node22',
		// Its dependencies stay imports; the contract, a workspace package of TypeScript sources, is
		// inlined, as the runner's build does.
		external: [...SANDBOX_EXTERNALS].flatMap((name) => [name, `${name}/*`]),
		logLevel: 'warning',
	});
}

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
	// Each bundle in a folder of this run's own (jest runs may overlap) inside its package, so that its
	// imports resolve as the sources' do (the runner has a commander of its own in runner/node_modules).
	const runnerDir = join(ROOT, 'runner', '.tmp', `test-bundle-${process.pid}`);
	const sandboxDir = join(ROOT, 'sandbox', '.tmp', `test-bundle-${process.pid}`);
	mkdirSync(sandboxDir, { recursive: true });
	// Without redis-server on PATH the tests that need Redis say so themselves (useRedisServer); the rest still run.
	const redisWanted = !process.env.REDIS_URL && !spawnSync('redis-server', ['--version']).error;
	const [, , servers] = await Promise.all([
		promisify(execFile)(process.execPath, [join(ROOT, 'runner', 'scripts', 'build.mjs'), runnerDir]),
		buildSandbox(join(sandboxDir, 'cli.js')),
		Promise.all(
			// One per worker, and one for the slow lane (laneRunner.ts).
			Array.from({ length: redisWanted ? Math.max(1, globalConfig.maxWorkers) + 1 : 0 }, () => startPrivateRedis()),
		),
	]);
	const resources: TestRunResources = { folders: [runnerDir, sandboxDir], servers };
	(globalThis as { convoTestRun?: TestRunResources }).convoTestRun = resources;
	process.env[TEST_RUNNER_BUNDLE] = join(runnerDir, 'main.js');
	process.env[TEST_SANDBOX_BUNDLE] = join(sandboxDir, 'cli.js');
	if (servers.length > 0) {
		const [serial, ...workers] = servers;
		process.env[TEST_SERIAL_REDIS_URL] = serial.url;
		process.env[TEST_REDIS_URLS] = workers.map((server) => server.url).join(' ');
	}
}
