/**
 * What the benchmarks share: options (`--quick` for small sizes while developing), the machine's
 * description, figures checked against their targets, the table each prints and the JSON each
 * writes to bench/results/, peak RSS of a child process, rates from the sandbox's own timestamps,
 * and INFO readings of Redis.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';

import type { Redis } from 'ioredis';

export const ROOT = resolve(__dirname, '..', '..');
export const RESULTS_DIR = join(ROOT, 'bench', 'results');

/** `--quick`: small sizes, so a change can be checked in a minute or two (figures then prove nothing). */
export const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';

export const size = (full: number, quick: number) => (QUICK ? quick : full);

/** Benchmarks run only when named (`--only million`): a 17-minute run, recorded once, not repeated by every `npm run bench`. */
export const NAMED_ONLY = new Set(['million']);

export interface Machine {
	cores: number;
	cpu: string;
	memoryGb: number;
	freeMemoryGbAtStart: number;
	loadAverageAtStart: number[];
	node: string;
	redis: string;
}

export function describeMachine(redisVersion: string): Machine {
	return {
		cores: cpus().length,
		cpu: cpus()[0]?.model ?? 'unknown',
		memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
		freeMemoryGbAtStart: Math.round((freemem() / 2 ** 30) * 10) / 10,
		loadAverageAtStart: loadavg().map((load) => Math.round(load * 100) / 100),
		node: process.version,
		redis: redisVersion,
	};
}

/** One line of a benchmark's table: a measured figure, and the target it answers to when it has one. */
export interface Figure {
	figure: string;
	value: number | string;
	unit?: string;
	target?: string;
	/** true / false when there is a target; absent for figures shown for context. */
	met?: boolean;
	/** The same figure measured earlier, shown beside it: `label` names when (a commit), the same for every figure of a benchmark. */
	before?: { label: string; value: string };
}

export interface BenchResult {
	name: string;
	title: string;
	quick: boolean;
	startedAt: string;
	seconds: number;
	figures: Figure[];
	/** What the figures were measured on and how (sizes, settings), for the docs. */
	notes: string[];
	details?: Record<string, unknown>;
}

export const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

function formatValue(figure: Figure): string {
	const value = typeof figure.value === 'number' ? figure.value.toLocaleString('en-US') : figure.value;
	return figure.unit ? `${value} ${figure.unit}` : value;
}

export const verdict = (figure: Figure) => (figure.met === undefined ? '' : figure.met ? 'met' : 'NOT met');

export function printTable(result: BenchResult): void {
	const before = result.figures.find((figure) => figure.before)?.before;
	const rows = result.figures.map((figure) => [
		figure.figure,
		formatValue(figure),
		...(before ? [figure.before?.value ?? ''] : []),
		figure.target ?? '',
		verdict(figure),
	]);
	const header = ['figure', 'measured', ...(before ? [before.label] : []), 'target', ''];
	const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
	const line = (cells: string[]) =>
		cells
			.map((cell, column) => cell.padEnd(widths[column]))
			.join('  ')
			.trimEnd();
	console.log(`\n${result.title}${result.quick ? ' (--quick sizes)' : ''}, ${result.seconds.toFixed(0)} s`);
	console.log(line(header));
	console.log(widths.map((width) => '-'.repeat(width)).join('  '));
	for (const row of rows) console.log(line(row));
	for (const note of result.notes) console.log(`  ${note}`);
}

/** Where a --quick run's figures go: beside, never over, the full run's that the docs are made from (not kept in git). */
const QUICK_RESULTS_DIR = join(RESULTS_DIR, 'quick');

export function writeResult(result: BenchResult, machine: Machine): void {
	const dir = result.quick ? QUICK_RESULTS_DIR : RESULTS_DIR;
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, `${result.name}.json`), `${JSON.stringify({ ...result, machine }, null, 2)}\n`);
}

export function readResult(name: string): (BenchResult & { machine: Machine }) | undefined {
	try {
		return JSON.parse(readFileSync(join(RESULTS_DIR, `${name}.json`), 'utf8')) as BenchResult & { machine: Machine };
	} catch {
		return undefined;
	}
}

/** A memory field (kB) of a live process's /proc status, in MB; 0 once the process is gone. */
function statusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number {
	if (pid === undefined) return 0;
	try {
		const status = readFileSync(`/proc/${pid}/status`, 'utf8');
		return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
	} catch {
		return 0;
	}
}

/** The kernel's high-water mark of a live process's resident memory, in MB. */
export const peakRssMb = (pid: number | undefined) => statusMb(pid, 'VmHWM');

/** A live process's resident memory now, in MB. */
export const currentRssMb = (pid: number | undefined) => statusMb(pid, 'VmRSS');

/**
 * CPU seconds a live process has used, user and system, every thread (/proc/<pid>/stat fields 14
 * and 15, in clock ticks of 1/100 s as on every Linux this runs on). Work per CPU second is a
 * capacity that does not depend on what else shares the machine.
 */
export function cpuSeconds(pid: number | undefined): number {
	if (pid === undefined) return 0;
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return (Number(fields[11]) + Number(fields[12])) / 100;
	} catch {
		return 0;
	}
}

export interface RateFigures {
	count: number;
	/** First to last send, seconds. */
	spanSeconds: number;
	/** Sends per second between the 5% and the 95% send (the middle 90%: ramp-up and tail left out). */
	steadyRate: number;
	/** The most sends in any window [t, t + 1000 ms). */
	maxSliding: number;
	/** The most sends in one calendar second of the sandbox's clock. */
	maxCalendar: number;
}

/** Rates from the times the SANDBOX recorded, never the runner's report. */
export function rateFigures(times: number[]): RateFigures {
	const sorted = [...times].sort((a, b) => a - b);
	const count = sorted.length;
	if (count < 2) return { count, spanSeconds: 0, steadyRate: 0, maxSliding: count, maxCalendar: count };
	const from = Math.floor(count * 0.05);
	const to = Math.ceil(count * 0.95) - 1;
	const steadyRate = (to - from) / ((sorted[to] - sorted[from]) / 1000);
	let maxSliding = 0;
	for (let end = 0, start = 0; end < count; end++) {
		while (sorted[end] - sorted[start] >= 1000) start++;
		maxSliding = Math.max(maxSliding, end - start + 1);
	}
	const perSecond = new Map<number, number>();
	for (const time of sorted) perSecond.set(Math.floor(time / 1000), (perSecond.get(Math.floor(time / 1000)) ?? 0) + 1);
	return {
		count,
		spanSeconds: (sorted[count - 1] - sorted[0]) / 1000,
		steadyRate,
		maxSliding,
		maxCalendar: Math.max(...perSecond.values()),
	};
}

export async function usedMemory(redis: Redis): Promise<number> {
	return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
}

/** Calls per command since Redis started (INFO commandstats). */
export async function commandCalls(redis: Redis): Promise<Map<string, number>> {
	const calls = new Map<string, number>();
	for (const match of (await redis.info('commandstats')).matchAll(/cmdstat_(\S+?):calls=(\d+)/g))
		calls.set(match[1], Number(match[2]));
	return calls;
}

/** Microseconds Redis spent in each command so far (INFO commandstats usec). */
export async function commandMicros(redis: Redis): Promise<number> {
	let total = 0;
	for (const match of (await redis.info('commandstats')).matchAll(/cmdstat_\S+?:calls=\d+,usec=(\d+)/g))
		total += Number(match[1]);
	return total;
}

/** CPU seconds the Redis server process has used (INFO cpu: user + sys). */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
	const info = await redis.info('cpu');
	const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
	return field('used_cpu_user') + field('used_cpu_sys');
}

export function callsBetween(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
	const delta = new Map<string, number>();
	for (const [command, calls] of after) {
		const grown = calls - (before.get(command) ?? 0);
		if (grown > 0) delta.set(command, grown);
	}
	return new Map([...delta].sort((a, b) => b[1] - a[1]));
}

/** Samples a value every `everyMs` and keeps the highest; `stop()` returns it. */
export function sampleMax(read: () => Promise<number>, everyMs: number): { stop(): Promise<number> } {
	let max = 0;
	let pending: Promise<void> = Promise.resolve();
	const timer = setInterval(() => {
		pending = read()
			.then((value) => void (max = Math.max(max, value)))
			.catch(() => undefined);
	}, everyMs);
	return {
		stop: async () => {
			clearInterval(timer);
			await pending;
			max = Math.max(max, await read().catch(() => 0));
			return max;
		},
	};
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
