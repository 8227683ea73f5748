/**
 * Benchmark 6: what the build buys at start (issue #19). The same runner started two ways, each
 * the node process itself (no npx or shell between, so its pid is the one measured):
 *
 *   built   node runner/dist/main.js ...          (the bundle `npm install convo-runner` runs)
 *   tsx     node runner/bin/convo-runner.mjs ...  (in the repository: the TypeScript sources
 *                                                  compiled by tsx at every start, as before the build)
 *
 * Measured, the two ways interleaved run by run so a change in the machine's load hits both:
 *   `--help`  wall time from spawn to exit (median and p90 of 15 runs, after one warm-up each) and
 *             the peak RSS of the node process (GNU time's %M, from wait4's rusage of its child)
 *   `start`   against the bench's Redis, RUNNER_TOKEN set, the API on a free port, the sandbox as
 *             the service: time from spawn to the first 200 of GET /readyz, and VmRSS after 10 s idle
 *   `worker`  time from spawn to its "runner started" log line, and VmRSS after 10 s idle
 *
 * The bundle is built first (runner/scripts/build.mjs), so the figures are of the current sources.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../runner/src/devRedis';
import { startRunnerUnderTest, waitFor } from '../test/runner/support';
import { ROOT, round, size, sleep, type BenchResult, type Figure } from './lib/common';
import { buildRunnerBundle } from './lib/stack';

const WAYS = {
	built: join(ROOT, 'runner', 'dist', 'main.js'),
	tsx: join(ROOT, 'runner', 'bin', 'convo-runner.mjs'),
} as const;
type Way = keyof typeof WAYS;
const WAY_NAMES = Object.keys(WAYS) as Way[];

const GNU_TIME = '/usr/bin/time';
const IDLE_MS = 10_000;
const TOKEN = 'bench-startup-token-0123456789';

const median = (values: number[]) => percentile(values, 0.5);
/** Nearest rank: the smallest value with at least `share` of the values at or below it. */
function percentile(values: number[], share: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)] ?? Number.NaN;
}
const load = () => loadavg().map((value) => round(value, 2));

/** One `--help` under GNU time: wall ms measured here, peak RSS (MB) of the node process from time's own file. */
async function helpOnce(way: Way): Promise<{ ms: number; peakMb: number }> {
	const dir = mkdtempSync(join(tmpdir(), 'convo-bench-startup-'));
	const file = join(dir, 'time');
	try {
		const started = process.hrtime.bigint();
		// time forks and execs node and waits for it: %M is node's own maxrss, in kB. -o keeps it apart from node's output.
		const child = spawn(GNU_TIME, ['-f', '%e %M', '-o', file, process.execPath, WAYS[way], '--help'], {
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
		child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
		const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
		const ms = Number(process.hrtime.bigint() - started) / 1e6;
		if (code !== 0 || !output.includes('Usage: convo-runner'))
			throw new Error(`${way} --help exited with ${code}: ${output.slice(-400)}`);
		const [, maxRssKb] = readFileSync(file, 'utf8').trim().split(/\s+/).slice(-2);
		return { ms, peakMb: Number(maxRssKb) / 1024 };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
	const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
	if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
	return Number(match[1]) / 1024;
}

async function stop(child: ChildProcess): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) return;
	const exited = new Promise((resolve) => child.once('exit', resolve));
	child.kill('SIGTERM');
	const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
	await exited;
	clearTimeout(timer);
}

interface ServeRun {
	readyMs: number;
	idleRssMb: number;
	idlePeakMb: number;
}

/**
 * `start` or `worker` once: spawned as node itself, ready when /readyz answers 200 (start) or at its
 * "runner started" line (worker, which has no API); then left idle 10 s and its RSS read.
 */
async function serveOnce(
	way: Way,
	role: 'start' | 'worker',
	env: NodeJS.ProcessEnv,
	idleMs: number,
): Promise<ServeRun> {
	const port = await freePort();
	const started = process.hrtime.bigint();
	const child = spawn(process.execPath, [WAYS[way], role], {
		env: { ...env, RUNNER_TOKEN: TOKEN, RUNNER_HTTP_PORT: String(port) },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	let loggedStartAt: bigint | undefined;
	const collect = (chunk: Buffer) => {
		output += chunk.toString();
		if (loggedStartAt === undefined && output.includes('"msg":"runner started"'))
			loggedStartAt = process.hrtime.bigint();
	};
	child.stdout?.on('data', collect);
	child.stderr?.on('data', collect);
	try {
		const readyAt = await waitFor(
			`${way} ${role} to be ready`,
			async () => {
				if (child.exitCode !== null)
					throw new Error(`${way} ${role} exited with ${child.exitCode}: ${output.slice(-600)}`);
				if (role === 'worker') return loggedStartAt;
				const response = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
				return response?.status === 200 ? process.hrtime.bigint() : undefined;
			},
			60_000,
			20,
		);
		const readyMs = Number(readyAt - started) / 1e6;
		await sleep(idleMs);
		if (child.exitCode !== null) throw new Error(`${way} ${role} exited while idle: ${output.slice(-600)}`);
		return {
			readyMs,
			idleRssMb: statusMb(child.pid as number, 'VmRSS'),
			idlePeakMb: statusMb(child.pid as number, 'VmHWM'),
		};
	} finally {
		await stop(child);
	}
}

export async function benchStartup(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const loadAtStart = load();
	if (spawnSync(GNU_TIME, ['--version']).error)
		throw new Error(`${GNU_TIME} (GNU time, Debian package "time") is needed for the peak RSS of --help`);
	buildRunnerBundle();

	const helpRuns = size(15, 3);
	const serveRuns = size(5, 1);
	const idleMs = size(IDLE_MS, 3_000);
	const help: Record<Way, { ms: number; peakMb: number }[]> = { built: [], tsx: [] };
	for (const way of WAY_NAMES) await helpOnce(way); // warm-up: the file cache, tsx's compile cache
	for (let run = 0; run < helpRuns; run++) for (const way of WAY_NAMES) help[way].push(await helpOnce(way));
	const loadAfterHelp = load();

	// The sandbox as the service and a key prefix of its own on the bench's Redis (deleted at close).
	const stack = await startRunnerUnderTest(redisUrl, { LOG_LEVEL: 'info' });
	const serve: Record<'start' | 'worker', Record<Way, ServeRun[]>> = {
		start: { built: [], tsx: [] },
		worker: { built: [], tsx: [] },
	};
	let loadAfterServe: number[] = [];
	try {
		// Not counted: the first start creates the prefix's queues and keys; every counted run finds them.
		await serveOnce('built', 'start', stack.env, 0);
		for (const role of ['start', 'worker'] as const) {
			for (let run = 0; run < serveRuns; run++)
				for (const way of WAY_NAMES) serve[role][way].push(await serveOnce(way, role, stack.env, idleMs));
		}
		loadAfterServe = load();
	} finally {
		await stack.close();
	}

	const both = (label: string, unit: string, pick: (way: Way) => number, digits = 0): Figure[] =>
		WAY_NAMES.map((way) => ({ figure: `${label}, ${way}`, value: round(pick(way), digits), unit }));
	const ratio = (label: string, pick: (way: Way) => number): Figure => ({
		figure: `${label}, built / tsx`,
		value: round(pick('built') / pick('tsx'), 2),
	});
	const helpMs = (way: Way) => help[way].map((run) => run.ms);
	const helpMb = (way: Way) => Math.max(...help[way].map((run) => run.peakMb));
	const serveMedian = (role: 'start' | 'worker', key: keyof ServeRun) => (way: Way) =>
		median(serve[role][way].map((run) => run[key]));

	const figures: Figure[] = [
		...both('`--help` wall time, median', 'ms', (way) => median(helpMs(way))),
		...both('`--help` wall time, p90', 'ms', (way) => percentile(helpMs(way), 0.9)),
		ratio('`--help` median wall time', (way) => median(helpMs(way))),
		...both('`--help` peak RSS (highest of the runs)', 'MB', helpMb),
		...both('`start`: spawn to first 200 from /readyz, median', 'ms', serveMedian('start', 'readyMs')),
		ratio('`start` time to ready', serveMedian('start', 'readyMs')),
		...both(`\`start\`: RSS after ${idleMs / 1000} s idle, median`, 'MB', serveMedian('start', 'idleRssMb')),
		...both('`start`: peak RSS up to then (VmHWM), median', 'MB', serveMedian('start', 'idlePeakMb')),
		ratio('`start` idle RSS', serveMedian('start', 'idleRssMb')),
		...both('`worker`: spawn to its "runner started" line, median', 'ms', serveMedian('worker', 'readyMs')),
		ratio('`worker` time to "runner started"', serveMedian('worker', 'readyMs')),
		...both(`\`worker\`: RSS after ${idleMs / 1000} s idle, median`, 'MB', serveMedian('worker', 'idleRssMb')),
		...both('`worker`: peak RSS up to then (VmHWM), median', 'MB', serveMedian('worker', 'idlePeakMb')),
		ratio('`worker` idle RSS', serveMedian('worker', 'idleRssMb')),
		{
			figure: 'load average (1 / 5 / 15 min): at start, after `--help`, at the end',
			value: `${loadAtStart.join(' ')}; ${loadAfterHelp.join(' ')}; ${loadAfterServe.join(' ')}`,
		},
	];
	const range = (values: number[]) => `${round(Math.min(...values))}–${round(Math.max(...values))}`;
	const spread = (role: 'start' | 'worker') =>
		WAY_NAMES.map(
			(way) =>
				`${way} ${range(serve[role][way].map((run) => run.readyMs))} ms, ${range(serve[role][way].map((run) => run.idleRssMb))} MB`,
		).join('; ');
	return {
		name: 'startup',
		title: 'Benchmark 6: start time and idle memory, built bundle against tsx',
		quick: helpRuns !== 15,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures,
		notes: [
			'built: `node runner/dist/main.js` (runner/scripts/build.mjs, run first); tsx: `node runner/bin/convo-runner.mjs`, which in the repository compiles the TypeScript sources with tsx at every start. Both are the node process itself, no wrapper; the two ways alternate run by run. tsx keeps what it compiled in a cache in the temp folder, so its figures are with that cache warm (the warm-up fills it): a first start after a change compiles more.',
			`\`--help\`: ${helpRuns} runs each after one warm-up; wall time from spawn to exit, taken here around \`/usr/bin/time -f '%e %M' node ...\` (the exec of time adds about a millisecond), peak RSS from time's %M (the node process's maxrss).`,
			`\`start\` and \`worker\`: ${serveRuns} run${serveRuns === 1 ? '' : 's'} each (median), REDIS_URL the bench's Redis under a key prefix of their own, RUNNER_TOKEN set, the API on a free port, the sandbox process as CONVO_EXTERNAL_URL; /readyz polled every 20 ms; RSS is VmRSS of \`/proc/<pid>/status\` after ${idleMs / 1000} s idle. One uncounted start ran first, to create the prefix's keys.`,
			`Spread of the runs (time to ready, idle RSS): \`start\` ${spread('start')}; \`worker\` ${spread('worker')}; \`--help\` ${WAY_NAMES.map((way) => `${way} ${range(helpMs(way))} ms`).join(', ')}. Idle RSS moves with when V8 last collected garbage; the peak (VmHWM) moves less.`,
			'Another process on this 2-core machine slows both ways alike only on average: read the ratios and the load average with the times.',
		],
		details: { help, serve, loadAtStart, loadAfterHelp, loadAfterServe, idleMs },
	};
}
