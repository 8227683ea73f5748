/**
 * The published runner on its own: `npm pack` of runner/, installed with `npm install
 * ./convo-runner-<v>.tgz` into an empty folder outside the repository, runs `npx convo-runner
 * start|worker|campaign|reindex` against a redis-server and the sandbox, with nothing of the
 * repository around (no tsx, no sources, no root node_modules on the way). What it did is read
 * from the sandbox's own log.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { RunningSandbox } from '../../sandbox/src';
import { freePort } from '../../runner/src/devRedis';
import {
	positionalTemplate,
	startSandboxProcess,
	templateSends,
	uniquePrefix,
	useRedisServer,
	waitFor,
} from './support';

jest.setTimeout(240_000);

const RUNNER_DIR = join(__dirname, '..', '..', 'runner');
const work = mkdtempSync(join(tmpdir(), 'convo-runner-packed-'));
const app = join(work, 'app');
const version = JSON.parse(readFileSync(join(RUNNER_DIR, 'package.json'), 'utf8')).version as string;

let redis: Awaited<ReturnType<typeof useRedisServer>>;
let sandbox: RunningSandbox;
let env: NodeJS.ProcessEnv;
const running: ReturnType<typeof spawn>[] = [];

/**
 * A command run the way an operator would, in the install folder, with a bare environment: the CLI
 * through `npx convo-runner`; the long-running processes through the same bin npx resolves
 * (node_modules/.bin), so that a signal reaches the runner itself rather than npm.
 */
function npx(args: string[], extraEnv: NodeJS.ProcessEnv = {}, direct = false) {
	const [command, prefix] = direct
		? [join(app, 'node_modules', '.bin', 'convo-runner'), []]
		: ['npx', ['--no', 'convo-runner']];
	const child = spawn(command, [...prefix, ...args], {
		cwd: app,
		env: { ...env, ...extraEnv },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let stdout = '';
	let stderr = '';
	child.stdout.on('data', (chunk) => (stdout += String(chunk)));
	child.stderr.on('data', (chunk) => (stderr += String(chunk)));
	const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
	return { child, exited, output: () => ({ stdout, stderr }) };
}

async function runToEnd(args: string[]) {
	const run = npx(args);
	const code = await run.exited;
	return { code, ...run.output() };
}

beforeAll(async () => {
	// .npmrc's ignore-scripts keeps `prepack` from running here: build first, as the release does.
	execFileSync(process.execPath, [join(RUNNER_DIR, 'scripts', 'build.mjs')], { stdio: 'pipe' });
	execFileSync('npm', ['pack', '--pack-destination', work], { cwd: RUNNER_DIR, stdio: 'pipe' });
	mkdirSync(app);
	// A bare environment: no NODE_PATH or npm workspace settings from the repository's test run;
	// the machine's own npm and TLS settings stay (CI points npm at the machine's global config,
	// with its CA file, when it runs a node of its own: .ci/run).
	const machine = Object.fromEntries(
		['npm_config_globalconfig', 'NODE_EXTRA_CA_CERTS']
			.filter((name) => process.env[name])
			.map((name) => [name, process.env[name]]),
	);
	env = {
		PATH: process.env.PATH,
		HOME: process.env.HOME,
		npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? work, '.npm'),
		...machine,
	};
	execFileSync('npm', ['install', '--no-audit', '--no-fund', `../convo-runner-${version}.tgz`], {
		cwd: app,
		env,
		stdio: 'pipe',
	});
	redis = await useRedisServer();
	sandbox = await startSandboxProcess();
	const business = sandbox.fixture.businesses[0];
	Object.assign(env, {
		REDIS_URL: redis.url,
		RUNNER_PREFIX: uniquePrefix(),
		CONVO_EXTERNAL_URL: sandbox.externalUrl,
		CONVO_API_KEY: business.apiKey,
		LOG_LEVEL: 'info',
	});
}, 240_000);

afterAll(async () => {
	for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
	await sandbox?.close();
	await redis?.stop();
	rmSync(work, { recursive: true, force: true });
});

test('the package holds the built runner and runtime dependencies only', () => {
	const installed = join(app, 'node_modules', 'convo-runner');
	expect(readdirSync(installed).sort()).toEqual(['LICENSE', 'README.md', 'bin', 'dist', 'package.json']);
	const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
	expect(manifest.private).toBeUndefined();
	expect(Object.keys(manifest.dependencies)).not.toContain('tsx');
	// What the repository's root brings for its tests and the node pack stays out.
	for (const devOnly of [
		'tsx',
		'jest',
		'n8n-core',
		'n8n-workflow',
		'playwright-core',
		'gulp',
		'typescript',
		'esbuild',
	]) {
		expect({ devOnly, present: existsSync(join(app, 'node_modules', devOnly)) }).toEqual({ devOnly, present: false });
	}
	// The bundle requires Node's own modules and the package's dependencies, nothing else: the
	// runner's sources and the contract are inside it, nothing reaches back into the repository.
	const bundle = readFileSync(join(installed, 'dist', 'main.js'), 'utf8');
	const required = new Set([...bundle.matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]));
	const allowed = new Set(Object.keys(manifest.dependencies));
	const outside = [...required].filter(
		(name) =>
			!name.startsWith('node:') &&
			!builtinModules.includes(name) &&
			!allowed.has(name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]),
	);
	expect(outside).toEqual([]);
	expect(required.size).toBeGreaterThan(10);
});

test('npx convo-runner start and worker send a campaign and a reindex run, each recipient once', async () => {
	const business = sandbox.fixture.businesses[0];
	const port = await freePort();
	const token = 'packed-runner-token-0123456789';
	const start = npx(['start'], { RUNNER_TOKEN: token, RUNNER_HTTP_PORT: String(port) }, true);
	const worker = npx(['worker'], {}, true);
	running.push(start.child, worker.child);
	const base = `http://127.0.0.1:${port}`;
	await waitFor(
		`the API to answer (${start.output().stderr})`,
		async () => {
			if (start.child.exitCode !== null) throw new Error(`start exited: ${start.output().stderr}`);
			return (await fetch(`${base}/readyz`).catch(() => undefined))?.ok;
		},
		60_000,
	);

	const phones = Array.from({ length: 40 }, (_, i) => `4917099${String(i).padStart(5, '0')}`);
	const csv = join(work, 'recipients.csv');
	writeFileSync(
		csv,
		['phone,1,2', ...phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`)].join('\n') + '\n',
	);
	const created = await runToEnd([
		'campaign',
		'create',
		'--template',
		positionalTemplate(business).id,
		'--from',
		`+${business.phoneNumbers[0]}`,
		'--recipients',
		csv,
		'--rate',
		'50',
		'--wait',
		'--json',
	]);
	expect(created).toMatchObject({ code: 0 });
	const answer = JSON.parse(created.stdout) as { id: string; accepted: number; status: { state: string } };
	expect(answer).toMatchObject({ accepted: 40, status: { state: 'completed' } });
	const sent = (await templateSends(sandbox)).filter((message) => phones.includes(message.to));
	expect(sent.map((message) => message.to).sort()).toEqual([...phones].sort());

	// The control API and the console's files come from the package's dist.
	const status = await fetch(`${base}/api/campaigns/${answer.id}`, { headers: { authorization: `Bearer ${token}` } });
	expect(status.status).toBe(200);
	expect(await status.json()).toMatchObject({ id: answer.id, state: 'completed' });
	const css = await fetch(`${base}/console/app.css`);
	expect(css.status).toBe(200);
	expect(await css.text()).toContain('{');

	const collection = business.collections[0].id;
	const feed = join(work, 'feed.ndjson');
	writeFileSync(
		feed,
		['packed-1', 'packed-2', 'packed-3'].map((sku) => JSON.stringify({ sku, title: `Item ${sku}` })).join('\n') + '\n',
	);
	const reindexed = await runToEnd([
		'reindex',
		'run',
		'--collection',
		collection,
		'--source',
		feed,
		'--id-field',
		'sku',
		'--wait',
		'--json',
	]);
	expect(reindexed).toMatchObject({ code: 0 });
	expect(JSON.parse(reindexed.stdout)).toMatchObject({ state: 'completed' });
	const listed = await fetch(`${sandbox.externalUrl}/search/items?collection_id=${collection}`, {
		headers: { 'x-api-key': business.apiKey },
	});
	const ids = ((await listed.json()) as { items: Array<{ external_id: string }> }).items.map(
		(item) => item.external_id,
	);
	expect(ids).toEqual(expect.arrayContaining(['packed-1', 'packed-2', 'packed-3']));

	// SIGTERM stops both cleanly.
	start.child.kill('SIGTERM');
	worker.child.kill('SIGTERM');
	expect(await start.exited).toBe(0);
	expect(await worker.exited).toBe(0);
});
