/**
 * Benchmark 3: what a 100,000-recipient campaign costs. The campaign is created by the CLI
 * (`convo-runner campaign create`, which reads and snapshots the recipients) and sent by one
 * `convo-runner worker`, the limit off (1,000/s) and no latency, so this is also the runner's own
 * ceiling on this machine. Figures:
 *
 *   peak RSS of the worker (kernel VmHWM) and of the CLI that created it (getrusage maxRSS)
 *   Redis bytes per recipient at peak (used_memory sampled every 500 ms) and after completion
 *   Redis commands per recipient (INFO commandstats before and after; Redis-wide, so it includes
 *   the worker's idle polling and this benchmark's status checks, twice a second)
 *
 * and those per-recipient costs times 1,000,000 and 10,000,000.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { Redis } from 'ioredis';

import { positionalTemplate, RUNNER_BIN, writeRecipientsCsv } from '../test/runner/support';
import { callsBetween, commandCalls, cpuSeconds, rateFigures, ROOT, round, sampleMax, size, usedMemory, type BenchResult, type Figure } from './lib/common';
import { sendsFrom, startStack, waitForCompletion, workerPeaksMb } from './lib/stack';

const TARGET_RSS_MB = 200;
const MAXRSS_PRELOAD = join(ROOT, 'bench', 'lib', 'maxrss.mjs');

/** Runs the CLI with the preload that reports its peak RSS; its JSON answer and that peak in MB. */
async function cliWithPeak(args: string[], env: NodeJS.ProcessEnv): Promise<{ answer: Record<string, unknown>; peakMb: number }> {
	const dir = mkdtempSync(join(tmpdir(), 'convo-bench-'));
	const file = join(dir, 'maxrss');
	try {
		const child = spawn(process.execPath, [RUNNER_BIN, ...args], {
			env: { ...env, NODE_OPTIONS: `--import ${pathToFileURL(MAXRSS_PRELOAD).href}`, BENCH_MAXRSS_FILE: file },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
		if (code !== 0) throw new Error(`convo-runner ${args.slice(0, 2).join(' ')} exited with ${code}: ${(stdout + stderr).slice(-500)}`);
		return { answer: JSON.parse(stdout) as Record<string, unknown>, peakMb: Number(readFileSync(file, 'utf8')) / 1024 };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

const megabytes = (bytes: number) => `${round(bytes / 1e6).toLocaleString('en-US')} MB`;
const gigabytes = (bytes: number) => `${round(bytes / 1e9, 1)} GB`;

export async function benchMemory(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const recipients = size(100_000, 5_000);
	const stack = await startStack(redisUrl, { concurrency: 50, latencyMs: 0, processes: 1 });
	const redis = new Redis(redisUrl);
	try {
		const template = positionalTemplate(stack.business).id;
		const from = stack.business.phoneNumbers[0];
		// A tenth of the size, created for tomorrow and cancelled, sends nothing: the create's RSS at a second size.
		const smaller = Math.round(recipients / 10);
		const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
		const small = await cliWithPeak(['campaign', 'create', '--template', template, '--from', from, '--recipients', writeRecipientsCsv(smaller, { seed: 31 }).path, '--at', tomorrow, '--json'], stack.env);
		await cliWithPeak(['campaign', 'cancel', String(small.answer.id), '--json'], stack.env);

		const { path } = writeRecipientsCsv(recipients, { seed: 30 });
		const workerPid = stack.processes[0].child.pid;
		const cpuBefore = cpuSeconds(workerPid);
		const memoryBefore = await usedMemory(redis);
		const callsBefore = await commandCalls(redis);
		const memoryPeak = sampleMax(() => usedMemory(redis), 500);
		const created = await cliWithPeak(
			['campaign', 'create', '--template', template, '--from', from, '--recipients', path, '--rate', '1000', '--json'],
			stack.env,
		);
		const id = String(created.answer.id);
		const memoryAfterCreate = await usedMemory(redis);
		// Timeout as if the runner did 200/s: generous on a loaded machine.
		await waitForCompletion(stack, id, recipients, 200);
		const peakBytes = (await memoryPeak.stop()) - memoryBefore;
		const afterBytes = (await usedMemory(redis)) - memoryBefore;
		const calls = callsBetween(callsBefore, await commandCalls(redis));
		const workerPeak = Math.max(...workerPeaksMb(stack));
		const workerCpu = cpuSeconds(workerPid) - cpuBefore;
		/** The create's RSS as a line through the two sizes: MB per recipient beyond a base. */
		const createSlope = (created.peakMb - small.peakMb) / (recipients - smaller);
		const createAt = (n: number) => `${round(created.peakMb + createSlope * (n - recipients)).toLocaleString('en-US')} MB`;
		const sends = await sendsFrom(stack);
		const rates = rateFigures(sends.map((message) => Date.parse(message.createdAt)));
		const totalCalls = [...calls.values()].reduce((sum, n) => sum + n, 0);

		const perRecipient = { peak: peakBytes / recipients, afterCreate: (memoryAfterCreate - memoryBefore) / recipients, after: afterBytes / recipients, commands: totalCalls / recipients };
		const figures: Figure[] = [
			{ figure: 'sends in the sandbox log', value: sends.length, target: `exactly ${recipients.toLocaleString('en-US')}`, met: sends.length === recipients && new Set(sends.map((m) => m.to)).size === recipients },
			{ figure: 'runner worker peak RSS', value: round(workerPeak), unit: 'MB', target: `<= ${TARGET_RSS_MB} MB`, met: workerPeak <= TARGET_RSS_MB },
			{ figure: '`campaign create` (CLI) peak RSS', value: round(created.peakMb), unit: 'MB', target: `<= ${TARGET_RSS_MB} MB`, met: created.peakMb <= TARGET_RSS_MB },
			{ figure: `\`campaign create\` peak RSS for ${smaller.toLocaleString('en-US')} recipients (created for tomorrow, cancelled)`, value: round(small.peakMb), unit: 'MB' },
			{ figure: 'runner worker CPU per send / sends per CPU second', value: `${round((workerCpu * 1000) / recipients, 2)} ms / ${round(recipients / Math.max(0.01, workerCpu))}` },
			{ figure: 'Redis bytes per recipient at peak', value: round(perRecipient.peak), unit: 'B' },
			{ figure: 'Redis bytes per recipient once created (all pending)', value: round(perRecipient.afterCreate), unit: 'B' },
			{ figure: 'Redis bytes per recipient after completion', value: round(perRecipient.after), unit: 'B' },
			{ figure: 'Redis commands per recipient', value: round(perRecipient.commands, 1) },
			{ figure: 'runner sustained rate, one process, limit off, no latency', value: round(rates.steadyRate), unit: '/s' },
		];
		for (const scale of [1_000_000, 10_000_000]) {
			const label = scale.toLocaleString('en-US');
			figures.push(
				{ figure: `${label} recipients: Redis at peak / after (extrapolated)`, value: `${(scale >= 1e7 ? gigabytes : megabytes)(perRecipient.peak * scale)} / ${(scale >= 1e7 ? gigabytes : megabytes)(perRecipient.after * scale)}` },
				{ figure: `${label} recipients: Redis commands (extrapolated)`, value: `${round((perRecipient.commands * scale) / 1e6, 1)} million` },
				{ figure: `${label} recipients: \`campaign create\` peak RSS (line through the two sizes; an upper estimate)`, value: createAt(scale) },
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
				`${recipients.toLocaleString('en-US')} recipients, created by the CLI, sent by one worker (RUNNER_CONCURRENCY 50, --rate 1000, no latency).`,
				'Bytes: INFO used_memory minus its value before the create. Commands: INFO commandstats after minus before, every command Redis ran meanwhile.',
				'Extrapolation: Redis, the measured per-recipient figures times the size; the create\'s RSS, the line through its two sizes, an upper estimate: since #20 the create keeps no per-recipient state (repeats are found in Redis), so what grows between the sizes is garbage V8 has not collected yet (docs/decisions.md, "Lean runner (#20): memory"). The worker keeps no per-recipient state (bounded job windows): benchmark 1 shows it at 10,000.',
			],
			details: { recipients, perRecipient, workerCpuSeconds: workerCpu, smallerCreatePeakMb: small.peakMb, commandsByName: Object.fromEntries([...calls].slice(0, 15)), workerPeakMb: workerPeak, createPeakMb: created.peakMb, rates },
		};
	} finally {
		redis.disconnect();
		await stack.close();
	}
}
