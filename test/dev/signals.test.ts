/**
 * `npm run dev` stops everything it started however it is told (issue 21, items 12 and 13): SIGTERM
 * or SIGINT to the npm process alone (an IDE's stop button, `timeout`, a process manager), or npm
 * killed outright, end Redis, the sandbox, the runner and n8n and free their ports. The real
 * `npm run dev` runs, with its real Redis, sandbox and runner; n8n is a stand-in (its install is
 * 3 GB and the e2e suite's business, test/e2e/dev-check.mjs), a small server that answers what
 * dev asks of n8n. The summary names the console's sign-in and the CLI's Redis and prefix.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { apiCaller, positionalTemplate, waitFor, type Business } from '../runner/support';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..');
const N8N_VERSION = /const N8N_VERSION = '([^']+)'/.exec(
	readFileSync(join(ROOT, 'scripts', 'dev', 'dev.mjs'), 'utf8'),
)?.[1] as string;

/** What dev needs of n8n: its import commands succeed, and `start` serves readiness and the owner setup until SIGTERM. */
const FAKE_N8N = `#!/usr/bin/env node
const http = require('node:http');
if (process.argv[2] !== 'start') process.exit(0);
http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{}'); })
	.listen(Number(process.env.N8N_PORT), '127.0.0.1');
`;

function fakeN8nInstall(): string {
	const e2e = mkdtempSync(join(tmpdir(), 'convo-dev-e2e-'));
	const bin = join(e2e, 'n8n', 'node_modules', '.bin');
	mkdirSync(bin, { recursive: true });
	writeFileSync(join(bin, 'n8n'), FAKE_N8N);
	chmodSync(join(bin, 'n8n'), 0o755);
	writeFileSync(join(e2e, 'n8n', `.installed-${N8N_VERSION}`), '');
	return e2e;
}

const groupAlive = (pid: number) => {
	try {
		process.kill(-pid, 0);
		return true;
	} catch {
		return false;
	}
};

const portFree = (port: number) =>
	new Promise<boolean>((resolve) => {
		const server = createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});

interface DevEnvironment {
	npm: ChildProcess;
	devDir: string;
	e2eDir: string;
	output(): string;
	exited: Promise<unknown>;
	groups(): Array<{ name: string; pid: number }>;
	ports: number[];
	redisUrl: string;
}

/** `npm run dev` as a user starts it, on free ports, its state in a directory of its own; resolved once it printed its summary. */
async function startDevEnvironment(): Promise<DevEnvironment> {
	const devDir = mkdtempSync(join(tmpdir(), 'convo-dev-'));
	const e2eDir = fakeN8nInstall();
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !/^(N8N_|REDIS_URL|RUNNER_|LOG_LEVEL|npm_)/.test(name)),
	);
	Object.assign(env, {
		DEV_DIR: devDir,
		E2E_DIR: e2eDir,
		DEV_SKIP_BUILD: '1',
		DEV_N8N_PORT: '0',
		DEV_SANDBOX_PORT: '0',
		DEV_RUNNER_PORT: '0',
	});
	// Its own process group, as a terminal would start it, so the test's own group never gets a signal meant for it.
	const npm = spawn('npm', ['run', 'dev', '--silent'], {
		cwd: ROOT,
		env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	npm.stdout?.on('data', (chunk) => (output += String(chunk)));
	npm.stderr?.on('data', (chunk) => (output += String(chunk)));
	const exited = new Promise((resolve) => npm.once('exit', resolve));
	await waitFor(
		'npm run dev to be ready',
		async () => {
			if (npm.exitCode !== null) throw new Error(`npm run dev ended early:\n${output}`);
			return /\] ready/.test(output);
		},
		150_000,
		250,
	);
	const port = (pattern: RegExp) => Number(pattern.exec(output)?.[1]);
	return {
		npm,
		devDir,
		e2eDir,
		output: () => output,
		exited,
		groups: () => JSON.parse(readFileSync(join(devDir, 'pids.json'), 'utf8')),
		ports: [
			port(/n8n editor\s+http:\/\/127\.0\.0\.1:(\d+)/),
			port(/sandbox\s+http:\/\/127\.0\.0\.1:(\d+)/),
			port(/runner\s+http:\/\/127\.0\.0\.1:(\d+)/),
		],
		redisUrl: /Redis at (redis:\/\/\S+)/.exec(output)?.[1] as string,
	};
}

/** After a stop: every process group dev started is gone and every port it served is free (whatever is left is killed, so a failure leaves nothing behind). */
async function expectAllStopped(dev: DevEnvironment): Promise<void> {
	const groups = dev.groups();
	expect(groups.map((group) => group.name)).toEqual(expect.arrayContaining(['redis', 'sandbox', 'runner', 'n8n']));
	try {
		await waitFor(
			'every process group to end',
			async () => groups.every((group) => !groupAlive(group.pid)),
			40_000,
			200,
		);
	} finally {
		for (const group of groups.filter((g) => groupAlive(g.pid))) process.kill(-group.pid, 'SIGKILL');
	}
	const redisPort = Number(new URL(dev.redisUrl).port);
	for (const port of [...dev.ports, redisPort])
		expect({ port, free: await portFree(port) }).toEqual({ port, free: true });
}

/** Kills what a failed test left running (npm's group and each group dev recorded), then removes its directories. */
function cleanUp(dev: DevEnvironment | undefined): void {
	if (!dev) return;
	for (const pid of [dev.npm.pid as number, ...dev.groups().map((group) => group.pid)])
		if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
	for (const dir of [dev.devDir, dev.e2eDir]) rmSync(dir, { recursive: true, force: true });
}

let dev: DevEnvironment | undefined;
afterEach(() => {
	cleanUp(dev);
	dev = undefined;
});

test.each(['SIGTERM', 'SIGINT'] as const)(
	'%s to the npm process alone stops n8n, the runner, the sandbox and Redis and frees their ports',
	async (signal) => {
		dev = await startDevEnvironment();
		expect(dev.ports.every((port) => port > 0)).toBe(true);
		dev.npm.kill(signal);
		await dev.exited;
		await expectAllStopped(dev);
		expect(dev.output()).toContain(`${signal}: stopping`);
	},
);

test('Ctrl-C while a send is in flight: Redis stops only after the runner, which settles the send it waited for', async () => {
	dev = await startDevEnvironment();
	const output = dev.output();
	const sandboxUrl = /sandbox\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
	const runnerUrl = /runner\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
	const { runnerToken } = JSON.parse(readFileSync(join(dev.devDir, 'state.json'), 'utf8')) as { runnerToken: string };
	const business = ((await (await fetch(`${sandboxUrl}/__sandbox/fixture`)).json()) as { businesses: Business[] })
		.businesses[0];
	// Each send takes 4 s to answer: the stop begins while one is in flight.
	const fault = await fetch(`${sandboxUrl}/__sandbox/faults`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ endpoint: 'POST /api/external/v2/send-template', latencyMs: 4000 }),
	});
	expect(fault.status).toBeLessThan(300);
	const api = apiCaller(() => runnerUrl, runnerToken);
	const created = await api('POST', '/api/campaigns', {
		template_id: positionalTemplate(business).id,
		from: business.phoneNumbers[0],
		rate: 1,
		recipients: [
			{ phone: '4917000000101', 1: 'a', 2: 'b' },
			{ phone: '4917000000102', 1: 'a', 2: 'b' },
		],
	});
	const { id } = created.json as { id: string };
	await waitFor(
		'a send in flight',
		async () =>
			((await api('GET', `/api/campaigns/${id}`)).json as { counts: { claimed: number } }).counts.claimed === 1,
		20_000,
		100,
	);
	dev.npm.kill('SIGINT');
	await dev.exited;
	await expectAllStopped(dev);
	const lines = readFileSync(join(dev.devDir, 'logs', 'runner.log'), 'utf8')
		.trim()
		.split('\n')
		.map((line) => JSON.parse(line) as { msg: string; clean?: boolean });
	const afterSignal = lines.slice(lines.findIndex((line) => line.msg === 'signal received'));
	// Redis went first before: the runner lost it mid-stop ("cannot reach Redis"), could not settle, and waited out its deadline.
	expect(
		afterSignal.filter((line) => /cannot reach Redis|could not stop cleanly/.test(line.msg)).map((line) => line.msg),
	).toEqual([]);
	expect(afterSignal.find((line) => line.msg === 'runner stopped')).toMatchObject({ clean: true });
});

test('npm killed outright (SIGKILL: no signal passed on): dev sees its parent gone and stops everything', async () => {
	dev = await startDevEnvironment();
	dev.npm.kill('SIGKILL');
	await dev.exited;
	await expectAllStopped(dev);
	expect(dev.output()).toMatch(/the parent process \(\d+\) went away: stopping/);
});

test('the summary gives the console sign-in (the command that prints the token) and a CLI line with the Redis and prefix, both working', async () => {
	dev = await startDevEnvironment();
	const output = dev.output();
	const state = JSON.parse(readFileSync(join(dev.devDir, 'state.json'), 'utf8')) as { runnerToken: string };
	// The token itself stays in the state file (mode 600), not in a terminal's scrollback or a CI log.
	expect(output).not.toContain(state.runnerToken);
	const tokenCommand = /\n {2}token {8}(node -p .+)\n/.exec(output)?.[1] as string;
	const printed = spawnSync('sh', ['-c', tokenCommand], { cwd: ROOT, encoding: 'utf8' });
	expect({ tokenCommand, stderr: printed.stderr, token: printed.stdout.trim() }).toEqual({
		tokenCommand,
		stderr: '',
		token: state.runnerToken,
	});
	const runnerUrl = /runner\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
	const session = await fetch(`${runnerUrl}/session`, {
		method: 'POST',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: `token=${encodeURIComponent(state.runnerToken)}`,
		redirect: 'manual',
	});
	expect(session.headers.get('set-cookie')).toMatch(/convo_session=/);

	const cliLine = /\n\s+(REDIS_URL=\S+ RUNNER_PREFIX=\S+ npx convo-runner campaign list)\n/.exec(output)?.[1] as string;
	expect(cliLine).toBe(`REDIS_URL=${dev.redisUrl} RUNNER_PREFIX=convo-dev npx convo-runner campaign list`);
	const cli = spawnSync('sh', ['-c', `${cliLine} --json`], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
	expect(cli.status).toBe(0);
	expect(JSON.parse(cli.stdout)).toMatchObject({ campaigns: expect.any(Array) });
	dev.npm.kill('SIGTERM');
	await dev.exited;
	await expectAllStopped(dev);
});
