/**
 * Benchmark 3: what a 100,000-recipient campaign costs. The campaign is created by the CLI
 * (`convo-runner campaign create`, which reads and snapshots the recipients) and sent by one
 * `convo-runner worker` started as the package ships it (its bin as a program, so the shebang's
 * node flags apply, on the built bundle), the limit off (1,000/s) and no latency, so this is also
 * the runner's own ceiling on this machine. Figures:
 *
 *   peak RSS of the worker (kernel VmHWM) and of the CLI that created it (getrusage maxRSS), the
 *   create also at a tenth of the size and at 1,000,000 (both created for tomorrow and cancelled)
 *   Redis bytes per recipient at peak (used_memory sampled every 500 ms) and after completion
 *   Redis commands and Redis CPU per recipient (INFO commandstats calls and usec, and INFO cpu,
 *   before and after; Redis-wide, so they include the worker's idle polling and this benchmark's
 *   status checks, twice a second)
 *
 * and those per-recipient costs times 1,000,000 and 10,000,000, beside the figures of a1cb78e
 * (before issue #20's send path) where there is one.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { Redis } from 'ioredis';

import { positionalTemplate, writeRecipientsCsv } from '../test/runner/support';
import {
	callsBetween,
	commandCalls,
	commandMicros,
	cpuSeconds,
	rateFigures,
	redisCpuSeconds,
	ROOT,
	round,
	sampleMax,
	size,
	usedMemory,
	type BenchResult,
	type Figure,
} from './lib/common';
import { sendsFrom, shippedBin, spawnShippedWorker, startStack, waitForCompletion, workerPeaksMb } from './lib/stack';

const TARGET_RSS_MB = 200;
const MAXRSS_PRELOAD = join(ROOT, 'bench', 'lib', 'maxrss.mjs');

/** Runs the CLI as shipped (shippedBin) with the preload that reports its peak RSS; its JSON answer and that peak in MB. */
async function cliWithPeak(
	args: string[],
	env: NodeJS.ProcessEnv,
): Promise<{ answer: Record<string, unknown>; peakMb: number }> {
	const dir = mkdtempSync(join(tmpdir(), 'convo-bench-'));
	const file = join(dir, 'maxrss');
	try {
		const child = spawn(shippedBin(), args, {
			env: { ...env, NODE_OPTIONS: `--import ${pathToFileURL(MAXRSS_PRELOAD).href}`, BENCH_MAXRSS_FILE: file },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
		if (code !== 0)
			throw new Error(
				`convo-runner ${args.slice(0, 2).join(' ')} exited with ${code}: ${(stdout + stderr).slice(-500)}`,
			);
		return { answer: JSON.parse(stdout) as Record<string, unknown>, peakMb: Number(readFileSync(file, 'utf8')) / 1024 };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/**
 * The same figures at a1cb78e, before #20 (docs/benchmarks.md of that commit; its Redis CPU measured
 * at that commit with this benchmark's probes on 2026-11-23, as the notes below say).
 */
const BEFORE_LABEL = 'a1cb78e (before #20)';
const BEFORE: Record<string, string> = {
	sends: '100,000',
	workerRss: '298 MB',
	createRss: '175 MB',
	createSmallRss: '145 MB',
	workerCpu: '0.88 ms / 1135',
	peakBytes: '305 B',
	createdBytes: '196 B',
	afterBytes: '270 B',
	commands: '71.2',
	rate: '920 /s',
};
/** Redis's CPU per recipient at a1cb78e, µs: commandstats usec, and the server process's CPU. */
const BEFORE_REDIS_MICROS = 230.3;
const BEFORE_REDIS_CPU_MICROS = 270.9;

const megabytes = (bytes: number) => `${round(bytes / 1e6).toLocaleString('en-US')} MB`;
const gigabytes = (bytes: number) => `${round(bytes / 1e9, 1)} GB`;

export async function benchMemory(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const recipients = size(100_000, 5_000);
	const largest = size(1_000_000, 20_000);
	const stack = await startStack(redisUrl, { concurrency: 50, latencyMs: 0, processes: 0 });
	const redis = new Redis(redisUrl);
	try {
		const template = positionalTemplate(stack.business).id;
		const from = stack.business.phoneNumbers[0];
		// A tenth of the size, created for tomorrow and cancelled, sends nothing: the create's RSS at a second size.
		const smaller = Math.round(recipients / 10);
		const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
		const small = await cliWithPeak(
			[
				'campaign',
				'create',
				'--template',
				template,
				'--from',
				from,
				'--recipients',
				writeRecipientsCsv(smaller, { seed: 31 }).path,
				'--at',
				tomorrow,
				'--json',
			],
			stack.env,
		);
		await cliWithPeak(['campaign', 'cancel', String(small.answer.id), '--json'], stack.env);

		const { path } = writeRecipientsCsv(recipients, { seed: 30 });
		// The send role alone: delivery tracking is its own process's work (RUNNER_TRACKING), costed in benchmark 9.
		const workerPid = spawnShippedWorker(stack, { RUNNER_TRACKING: 'off' }).child.pid;
		// Started and idle before the measured create, as a deployed worker is.
		await new Promise((resolve) => setTimeout(resolve, 3000));
		const cpuBefore = cpuSeconds(workerPid);
		const memoryBefore = await usedMemory(redis);
		const callsBefore = await commandCalls(redis);
		const microsBefore = await commandMicros(redis);
		const redisCpuBefore = await redisCpuSeconds(redis);
		const memoryPeak = sampleMax(() => usedMemory(redis), 500);
		const created = await cliWithPeak(
			['campaign', 'create', '--template', template, '--from', from, '--recipients', path, '--rate', '1000', '--json'],
			stack.env,
		);
		const id = String(created.answer.id);
		const memoryAfterCreate = await usedMemory(redis);
		const createCalls = [...callsBetween(callsBefore, await commandCalls(redis)).values()].reduce(
			(sum, n) => sum + n,
			0,
		);
		// Timeout as if the runner did 200/s: generous on a loaded machine.
		await waitForCompletion(stack, id, recipients, 200);
		const peakBytes = (await memoryPeak.stop()) - memoryBefore;
		const afterBytes = (await usedMemory(redis)) - memoryBefore;
		const calls = callsBetween(callsBefore, await commandCalls(redis));
		const redisMicros = (await commandMicros(redis)) - microsBefore;
		const redisCpu = (await redisCpuSeconds(redis)) - redisCpuBefore;
		const workerPeak = Math.max(...workerPeaksMb(stack));
		const workerCpu = cpuSeconds(workerPid) - cpuBefore;
		const sends = await sendsFrom(stack);
		// The largest create, after the sends so it weighs on none of their figures; it sends nothing.
		const large = await cliWithPeak(
			[
				'campaign',
				'create',
				'--template',
				template,
				'--from',
				from,
				'--recipients',
				writeRecipientsCsv(largest, { seed: 32 }).path,
				'--at',
				tomorrow,
				'--json',
			],
			stack.env,
		);
		await cliWithPeak(['campaign', 'cancel', String(large.answer.id), '--json'], stack.env);
		/** The create's RSS as a line through the two largest sizes: MB per recipient beyond a base. */
		const createSlope = (large.peakMb - created.peakMb) / (largest - recipients);
		const createAt = (n: number) => `${round(large.peakMb + createSlope * (n - largest)).toLocaleString('en-US')} MB`;
		const createPeaks = [small.peakMb, created.peakMb, large.peakMb];
		const createSpread = Math.max(...createPeaks) - Math.min(...createPeaks);
		const rates = rateFigures(sends.map((message) => Date.parse(message.createdAt)));
		const totalCalls = [...calls.values()].reduce((sum, n) => sum + n, 0);

		const perRecipient = {
			peak: peakBytes / recipients,
			afterCreate: (memoryAfterCreate - memoryBefore) / recipients,
			after: afterBytes / recipients,
			commands: totalCalls / recipients,
			/** Of which the create's (the CLI's staging and commit, and anything else Redis ran meanwhile). */
			createCommands: createCalls / recipients,
			redisMicros: redisMicros / recipients,
			redisCpuMicros: (redisCpu * 1e6) / recipients,
		};
		const cpuPerSendMs = (workerCpu * 1000) / recipients;
		const before = (key: keyof typeof BEFORE) => ({ label: BEFORE_LABEL, value: BEFORE[key] });
		const label = (n: number) => n.toLocaleString('en-US');
		const figures: Figure[] = [
			{
				figure: 'sends in the sandbox log',
				value: sends.length,
				before: before('sends'),
				target: `exactly ${label(recipients)}`,
				met: sends.length === recipients && new Set(sends.map((m) => m.to)).size === recipients,
			},
			{
				figure: 'runner worker peak RSS (as shipped: bin and bundle)',
				value: round(workerPeak),
				unit: 'MB',
				before: before('workerRss'),
				target: `<= ${TARGET_RSS_MB} MB`,
				met: workerPeak <= TARGET_RSS_MB,
			},
			{
				figure: '`campaign create` (CLI) peak RSS',
				value: round(created.peakMb),
				unit: 'MB',
				before: before('createRss'),
				target: `<= ${TARGET_RSS_MB} MB`,
				met: created.peakMb <= TARGET_RSS_MB,
			},
			{
				figure: `\`campaign create\` peak RSS for ${label(smaller)} recipients (created for tomorrow, cancelled)`,
				value: round(small.peakMb),
				unit: 'MB',
				before: before('createSmallRss'),
			},
			{
				figure: `\`campaign create\` peak RSS for ${label(largest)} recipients (created for tomorrow, cancelled)`,
				value: round(large.peakMb),
				unit: 'MB',
				target: `<= ${TARGET_RSS_MB} MB`,
				met: large.peakMb <= TARGET_RSS_MB,
			},
			// Before #20 the create grew with the audience: 145 MB at 10,000, 175 MB at 100,000, 546 MB at
			// 1,000,000 (docs/decisions/campaigns/repeats-found-in-redis.md).
			{
				figure: `\`campaign create\` peak RSS from ${label(smaller)} to ${label(largest)}: largest less smallest`,
				value: round(createSpread),
				unit: 'MB',
				before: { label: BEFORE_LABEL, value: '401 MB (145 to 546)' },
			},
			{
				figure: 'runner worker CPU per send / sends per CPU second',
				value: `${round(cpuPerSendMs, 2)} ms / ${round(recipients / Math.max(0.01, workerCpu))}`,
				before: before('workerCpu'),
				target: '<= 0.5 ms',
				met: cpuPerSendMs <= 0.5,
			},
			{
				figure: 'Redis bytes per recipient at peak',
				value: round(perRecipient.peak),
				unit: 'B',
				before: before('peakBytes'),
			},
			{
				figure: 'Redis bytes per recipient once created (all pending)',
				value: round(perRecipient.afterCreate),
				unit: 'B',
				before: before('createdBytes'),
			},
			{
				figure: 'Redis bytes per recipient after completion',
				value: round(perRecipient.after),
				unit: 'B',
				before: before('afterBytes'),
			},
			{
				figure: 'Redis commands per recipient',
				value: round(perRecipient.commands, 1),
				before: before('commands'),
				target: '<= 35',
				met: perRecipient.commands <= 35,
			},
			{
				figure: 'Redis CPU per recipient: commandstats usec / server process CPU (INFO cpu)',
				value: `${round(perRecipient.redisMicros, 1)} / ${round(perRecipient.redisCpuMicros, 1)} µs`,
				before: { label: BEFORE_LABEL, value: `${BEFORE_REDIS_MICROS} / ${BEFORE_REDIS_CPU_MICROS} µs` },
				target: `usec <= ${round(BEFORE_REDIS_MICROS / 2, 1)} (half)`,
				met: perRecipient.redisMicros <= BEFORE_REDIS_MICROS / 2,
			},
			{
				figure: 'runner sustained rate, one process, limit off, no latency',
				value: round(rates.steadyRate),
				unit: '/s',
				before: before('rate'),
			},
		];
		for (const scale of [1_000_000, 10_000_000]) {
			const label = scale.toLocaleString('en-US');
			// The create is measured up to `largest`: the line only beyond it.
			figures.push(
				{
					figure: `${label} recipients: Redis at peak / after (extrapolated)`,
					value: `${(scale >= 1e7 ? gigabytes : megabytes)(perRecipient.peak * scale)} / ${(scale >= 1e7 ? gigabytes : megabytes)(perRecipient.after * scale)}`,
				},
				{
					figure: `${label} recipients: Redis commands (extrapolated)`,
					value: `${round((perRecipient.commands * scale) / 1e6, 1)} million`,
				},
				...(scale > largest
					? [
							{
								figure: `${label} recipients: \`campaign create\` peak RSS (line through the two largest sizes; an upper estimate)`,
								value: createAt(scale),
							},
						]
					: []),
			);
		}
		return {
			name: 'memory',
			title: 'Benchmark 3: memory and Redis cost of a campaign',
			quick: recipients !== 100_000,
			startedAt: new Date(started).toISOString(),
			seconds: (Date.now() - started) / 1000,
			figures,
			notes: [
				`${label(recipients)} recipients, created by the CLI, sent by one worker (RUNNER_CONCURRENCY 50, --rate 1000, no latency), started as the package ships it: runner/bin/convo-runner.mjs run as a program beside the built bundle (dist/), so its shebang's node flags apply.`,
				'The worker has the send role alone (RUNNER_TRACKING=off): these are the send path\'s figures. Delivery tracking (#22) is a process role of its own; its Redis cost per sent message is benchmark 9\'s "on less off".',
				"Bytes: INFO used_memory minus its value before the create. Commands and Redis CPU: INFO commandstats (calls, usec) and INFO cpu (the server process, user + sys) after minus before, everything Redis ran meanwhile; commandstats counts a script's own commands both by themselves and in its EVALSHA, so its usec is an upper figure and the process CPU the plain one.",
				"The a1cb78e column: that commit's figures in docs/benchmarks.md (2026-11-22); its Redis CPU was measured on 2026-11-23 by running that commit's benchmark with these probes added, a run that gave 91.8 commands per recipient, 0.48 ms worker CPU per send, worker 289 MB and create 177 MB / 148 MB on that day's machine load.",
				`The creates of ${label(smaller)} and ${label(largest)} recipients are created for tomorrow and cancelled (they send nothing); the largest runs after the sends, so it weighs on none of their figures.`,
				"Extrapolation: Redis, the measured per-recipient figures times the size; the create's RSS beyond its largest size, the line through its two largest sizes, an upper estimate: since #20 the create keeps no per-recipient state (repeats are found in Redis; docs/decisions/campaigns/repeats-found-in-redis.md). The worker keeps no per-recipient state (a bounded queue depth): benchmark 1 shows it at 10,000.",
			],
			details: {
				recipients,
				perRecipient,
				workerCpuSeconds: workerCpu,
				redisCpuSeconds: redisCpu,
				smallerCreatePeakMb: small.peakMb,
				largestCreate: { recipients: largest, peakMb: large.peakMb },
				commandsByName: Object.fromEntries([...calls].slice(0, 15)),
				workerPeakMb: workerPeak,
				createPeakMb: created.peakMb,
				rates,
			},
		};
	} finally {
		redis.disconnect();
		await stack.close();
	}
}
