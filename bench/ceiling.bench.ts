/**
 * Benchmark 14 (#38): one number at the channel's ceiling, 1,000 messages per second, and the rate
 * held at every rate. One `convo-runner worker` started as the package ships it, the sandbox adding
 * 50 ms to every send, one campaign per run, figures read from the sandbox's log by each send's
 * arrival (request.receivedAt) and from Redis's own counters:
 *
 *   ceiling    100,000 recipients at 1,000/s, delivery tracking off (the send role alone): the
 *              sustained rate, the busiest sliding second, the worker's CPU per send, Redis's CPU
 *              per recipient (commandstats usec and the server's CPU), peak RSS, Redis bytes per recipient
 *   tracking   the same at 1,000/s with delivery tracking on in the same process (A1 checks 1 s, 3 s
 *              and 10 s after each send at RUNNER_TRACKING_RATE 50): its requests held to their
 *              rate, the sends beside the run without it
 *   4/s, 100/s the rate held at a low and a middle rate: sustained and busiest sliding second
 *   room 16ms  the ceiling, middle and low runs again with the start gate's room at 16 ms instead of
 *              40 (RUNNER_RATE_ROOM): what a smaller room holds on this machine
 *
 * The sandbox's capacity (benchmark 5, the same `npm run bench`) is shown beside the ceiling, so it
 * is plain that the sandbox is not what bounds it. The million-recipient run is `--only million`
 * (about 17 minutes at 1,000/s; not in the default run): the same figures, every process's memory
 * sampled through the run.
 */
import { loadavg } from 'node:os';

import { Redis } from 'ioredis';

import { SPAN_ROOM } from '../runner/src/sending/startGateMath';

import { deliveryChecks, setDelivery, type DeliveryChecks } from '../test/runner/support';
import { decodeRecipient } from '../runner/src/campaigns/schema';
import { createCampaign } from '../runner/src/core/campaigns';
import {
	callsBetween,
	commandCalls,
	commandMicros,
	cpuSeconds,
	currentRssMb,
	peakRssMb,
	rateFigures,
	readResult,
	redisCpuSeconds,
	round,
	sampleMax,
	size,
	sleep,
	usedMemory,
	QUICK,
	type BenchResult,
	type Figure,
} from './lib/common';
import {
	positionalTemplate,
	arrivalsFrom,
	spawnShippedWorker,
	startStack,
	startTap,
	type Tap,
	waitForCompletion,
	writeRecipientsCsv,
} from './lib/stack';
import { startWireCapture } from './lib/wire';

const LATENCY_MS = 50;
/**
 * Sends one process works at once: at 1,000/s each send is out about 55 ms (the latency and a
 * round trip), so about 55 are out at any moment; the rest wait for their places on the clock.
 */
const CONCURRENCY = 100;
const TRACKING_RATE = 50;
/** The share of the rate to sustain, and the most sends any sliding second may hold (the rate itself). */
const SHARE = 0.98;
const WORKER_CPU_MS = 0.2;
const REDIS_MICROS = 60;
const RSS_MB = 200;
/** The start gate's room of the runs that try a smaller one (RUNNER_RATE_ROOM, ms): 0.982 of the rate by the gate's clock. */
const SMALL_ROOM_MS = 16;
/** Recipients up to which a run reads every claim time from the ledger (the million run does not). */
const CLAIMS_READ_MAX = 200_000;

interface Run {
	name: string;
	rate: number;
	recipients: number;
	tracking: boolean;
	/** The start gate's room (RUNNER_RATE_ROOM), ms. */
	roomMs: number;
	sends: number;
	distinctPhones: number;
	steadyRate: number;
	spanSeconds: number;
	maxSliding: number;
	maxCalendar: number;
	/** The busiest sliding second by arrival at the tap in front of the sandbox (bench/lib/tap.mjs), and the sends it saw. */
	tapMaxSliding: number;
	tapSends: number;
	/** The busiest sliding second by the kernel's stamp of each send's packet (bench/lib/wire.ts), or why it was not measured. */
	wire: { maxSliding: number; sends: number; dropped: number } | { unavailable: string };
	workerCpuMsPerSend: number;
	redisMicrosPerRecipient: number;
	redisCpuMicrosPerRecipient: number;
	commandsPerRecipient: number;
	peakBytesPerRecipient: number;
	peakRssMb: number;
	/** The worker's RSS every 10 s (MB): flat, or growing. */
	rssSamplesMb: number[];
	usedMemorySamplesMb: number[];
	statusChecks?: number;
	maxSlidingChecks?: number;
	/** Script calls (EVALSHA) per recipient, Redis-wide. */
	scriptCallsPerRecipient: number;
	/** From each recipient's claim (the ledger, Redis's clock) to its arrival at the sandbox, ms: p50, p99, p99.9, max. */
	claimToArrivalMs: number[];
	loadAtEnd: number[];
}

interface Plan {
	name: string;
	rate: number;
	recipients: number;
	tracking: boolean;
	seed: number;
	/** RUNNER_RATE_ROOM in ms; unset, the default. */
	roomMs?: number;
}

const trackingEnv = (on: boolean): NodeJS.ProcessEnv =>
	on
		? { RUNNER_TRACKING_SCHEDULE: '1s,3s,10s', RUNNER_TRACKING_RATE: String(TRACKING_RATE) }
		: { RUNNER_TRACKING: 'off' };

async function runAt(redisUrl: string, plan: Plan): Promise<Run> {
	const stack = await startStack(redisUrl, { concurrency: CONCURRENCY, latencyMs: LATENCY_MS, processes: 0 });
	const redis = new Redis(redisUrl);
	let tap: Tap | undefined;
	let wire: Awaited<ReturnType<typeof startWireCapture>> | undefined;
	try {
		if (plan.tracking)
			await setDelivery(stack.sandbox, {
				seed: 'bench-ceiling',
				delivered: 0.9,
				read: 0.6,
				failed: [{ share: 0.05, reason: 'Message expired before delivery' }],
				delays_ms: { sent: 200, delivered: 500, read: 1500, failed: 800 },
			});
		const { path } = writeRecipientsCsv(plan.recipients, { seed: plan.seed });
		// The worker's sends go through the tap; its delivery checks (CONVO_BASE_URL) go to the sandbox itself.
		tap = await startTap(stack);
		// The sends on their way into the tap: the requests as they reach the sandbox's host.
		wire = await startWireCapture(Number(new URL(tap.externalUrl).port));
		const worker = spawnShippedWorker(stack, {
			CONVO_EXTERNAL_URL: tap.externalUrl,
			...trackingEnv(plan.tracking),
			...(plan.roomMs === undefined ? {} : { RUNNER_RATE_ROOM: `${plan.roomMs}ms` }),
			...(plan.tracking
				? { CONVO_BASE_URL: stack.sandbox.baseUrl, CONVO_ACCESS_TOKEN: stack.business.accessToken }
				: {}),
		});
		const pid = worker.child.pid;
		// Started and idle before the measured create, as a deployed worker is.
		await sleep(3000);
		const cpuBefore = cpuSeconds(pid);
		const memoryBefore = await usedMemory(redis);
		const callsBefore = await commandCalls(redis);
		const microsBefore = await commandMicros(redis);
		const redisCpuBefore = await redisCpuSeconds(redis);
		const memoryPeak = sampleMax(() => usedMemory(redis), 500);
		const rssSamplesMb: number[] = [];
		const usedMemorySamplesMb: number[] = [];
		let campaign = '';
		const sampler = setInterval(() => {
			rssSamplesMb.push(round(currentRssMb(pid)));
			void usedMemory(redis).then((bytes) => usedMemorySamplesMb.push(round(bytes / 1e6)));
		}, 10_000);
		try {
			const created = await createCampaign(stack.context, {
				templateId: positionalTemplate(stack.business).id,
				from: stack.business.phoneNumbers[0],
				source: path,
				rate: plan.rate,
			});
			if (created.kind !== 'campaign') throw new Error('expected a campaign');
			campaign = created.id;
			await waitForCompletion(stack, created.id, plan.recipients, plan.rate);
		} finally {
			clearInterval(sampler);
		}
		const peakBytes = (await memoryPeak.stop()) - memoryBefore;
		const callsByCommand = callsBetween(callsBefore, await commandCalls(redis));
		const calls = [...callsByCommand.values()].reduce((sum, n) => sum + n, 0);
		const redisMicros = (await commandMicros(redis)) - microsBefore;
		const redisCpu = (await redisCpuSeconds(redis)) - redisCpuBefore;
		const workerCpu = cpuSeconds(pid) - cpuBefore;
		const sends = await arrivalsFrom(stack);
		const rates = rateFigures(sends.map((send) => send.at));
		const tapped = await tap.arrivals();
		const onWire = 'stop' in wire ? await wire.stop() : undefined;
		const wireFigures =
			onWire && 'times' in onWire
				? { maxSliding: rateFigures(onWire.times).maxSliding, sends: onWire.times.length, dropped: onWire.dropped }
				: { unavailable: 'unavailable' in wire ? wire.unavailable : 'not stopped' };
		wire = undefined;
		// Each recipient's claim, from the ledger: read whole, so only for runs up to CLAIMS_READ_MAX.
		const claims = plan.recipients <= CLAIMS_READ_MAX ? await claimTimes(stack, campaign) : new Map<string, number>();
		const ways = sends
			.map((send) => send.at - (claims.get(send.to) ?? Number.NaN))
			.filter(Number.isFinite)
			.sort((a, b) => a - b);
		const run: Run = {
			name: plan.name,
			rate: plan.rate,
			recipients: plan.recipients,
			tracking: plan.tracking,
			roomMs: plan.roomMs ?? Math.round(SPAN_ROOM * 1000),
			sends: sends.length,
			distinctPhones: new Set(sends.map((send) => send.to)).size,
			steadyRate: round(rates.steadyRate, 2),
			spanSeconds: round(rates.spanSeconds, 1),
			maxSliding: rates.maxSliding,
			maxCalendar: rates.maxCalendar,
			tapMaxSliding: rateFigures(tapped).maxSliding,
			tapSends: tapped.length,
			wire: wireFigures,
			workerCpuMsPerSend: round((workerCpu * 1000) / Math.max(1, sends.length), 3),
			redisMicrosPerRecipient: round(redisMicros / plan.recipients, 1),
			redisCpuMicrosPerRecipient: round((redisCpu * 1e6) / plan.recipients, 1),
			commandsPerRecipient: round(calls / plan.recipients, 1),
			scriptCallsPerRecipient: round((callsByCommand.get('evalsha') ?? 0) / plan.recipients, 2),
			claimToArrivalMs: [0.5, 0.99, 0.999]
				.map((share) => ways[Math.floor(ways.length * share)] ?? 0)
				.concat(ways.at(-1) ?? 0),
			peakBytesPerRecipient: round(peakBytes / plan.recipients),
			peakRssMb: round(peakRssMb(pid)),
			rssSamplesMb,
			usedMemorySamplesMb,
			loadAtEnd: loadAverage(),
		};
		if (plan.tracking) {
			const checks: DeliveryChecks = await deliveryChecks(stack.sandbox);
			const status = Object.values(checks.status).flatMap((list) => list.map((iso) => Date.parse(iso)));
			const lookups = Object.values(checks.conversations).flatMap((list) => list.map((iso) => Date.parse(iso)));
			run.statusChecks = status.length;
			run.maxSlidingChecks = rateFigures([...status, ...lookups]).maxSliding;
		}
		return run;
	} finally {
		if (wire && 'stop' in wire) await wire.stop().catch(() => undefined);
		tap?.close();
		redis.disconnect();
		await stack.close();
	}
}

/** Each recipient's first claim (ms, Redis's clock: the ledger's record) by its phone. */
async function claimTimes(
	stack: Awaited<ReturnType<typeof startStack>>,
	campaign: string,
): Promise<Map<string, number>> {
	const from = stack.business.phoneNumbers[0];
	const { redis, keys } = stack.context;
	const [ledger, rows] = await Promise.all([
		redis.hgetall(keys.ledger(from, campaign)),
		redis.hgetall(keys.recipients(from, campaign)),
	]);
	const claims = new Map<string, number>();
	for (const [index, record] of Object.entries(ledger)) {
		const row = rows[index];
		// A ledger record is `state|attempts|first claimed|last changed|ref|error` (lua/includes/ledgerRecords.lua).
		if (row) claims.set(decodeRecipient(row).phone, Number(record.split('|')[2]));
	}
	return claims;
}

const loadAverage = () => loadavg().map((load) => round(load, 2));

const TAP_NOTE =
	"The worker's sends pass through a tap in front of the sandbox (bench/lib/tap.mjs), a process of its own that holds only each send's arrival time: its stamps are arrivals timed outside the receiving process, whose pauses grow with its log. " +
	"On the wire: tcpdump on loopback (bench/lib/wire.ts) keeps each packet that carries a send request to the tap, stamped by the kernel as it arrives: the time the request reached the sandbox's host, which no process's wait for a core on these shared cores can move (the tap's and the sandbox's stamps are taken when their event loops read it).";

/** The figures every run answers to: each recipient once, the rate sustained, never above it. */
function rateFiguresOf(run: Run): Figure[] {
	const label = `${run.name} (${run.rate.toLocaleString('en-US')}/s, ${run.recipients.toLocaleString('en-US')} recipients)`;
	const floor = round(run.rate * SHARE, 2);
	return [
		{
			figure: `${label}: sends in the sandbox log, distinct phones`,
			value: `${run.sends.toLocaleString('en-US')}, ${run.distinctPhones.toLocaleString('en-US')}`,
			target: `exactly ${run.recipients.toLocaleString('en-US')}, each phone once`,
			met: run.sends === run.recipients && run.distinctPhones === run.recipients,
		},
		{
			figure: `${run.name}: sustained rate (share of the limit)`,
			value: `${run.steadyRate} (${round(run.steadyRate / run.rate, 3)})`,
			unit: '/s',
			target: `>= ${SHARE} x ${run.rate}/s = ${floor}/s`,
			met: run.steadyRate >= floor,
		},
		{
			figure: `${run.name}: most sends in any sliding second (in a clock second)`,
			value: `${run.maxSliding} (${run.maxCalendar})`,
			target: `<= ${run.rate}`,
			met: run.maxSliding <= run.rate,
		},
		{
			figure: `${run.name}: most sends in any sliding second by arrival at a tap in front of the sandbox (sends it saw)`,
			value: `${run.tapMaxSliding} (${run.tapSends.toLocaleString('en-US')})`,
			target: `<= ${run.rate}`,
			met: run.tapMaxSliding <= run.rate,
		},
		wireFigure(run),
	];
}

/** The busiest sliding second on the wire: whole only when every send was captured. */
function wireFigure(run: Run): Figure {
	const figure = `${run.name}: most sends in any sliding second on the wire into the sandbox's host, the kernel's stamp (sends captured, dropped)`;
	const { wire } = run;
	if ('unavailable' in wire)
		return { figure, value: `not measured: ${wire.unavailable}`, target: `<= ${run.rate}`, met: false };
	return {
		figure,
		value: `${wire.maxSliding} (${wire.sends.toLocaleString('en-US')}, ${wire.dropped})`,
		target: `<= ${run.rate}, every send captured`,
		met: wire.maxSliding <= run.rate && wire.dropped === 0 && wire.sends === run.sends,
	};
}

function costFigures(run: Run, earlierBytes: number | undefined): Figure[] {
	return [
		{
			figure: `${run.name}: worker CPU per send`,
			value: run.workerCpuMsPerSend,
			unit: 'ms',
			target: `<= ${WORKER_CPU_MS} ms`,
			met: run.workerCpuMsPerSend <= WORKER_CPU_MS,
		},
		{
			figure: `${run.name}: Redis CPU per recipient, commandstats usec / server CPU`,
			value: `${run.redisMicrosPerRecipient} / ${run.redisCpuMicrosPerRecipient}`,
			unit: 'µs',
			target: `both <= ${REDIS_MICROS} µs`,
			met: run.redisMicrosPerRecipient <= REDIS_MICROS && run.redisCpuMicrosPerRecipient <= REDIS_MICROS,
		},
		{
			figure: `${run.name}: Redis commands per recipient (script calls of them)`,
			value: `${run.commandsPerRecipient} (${run.scriptCallsPerRecipient})`,
		},
		{
			figure: `${run.name}: worker peak RSS`,
			value: run.peakRssMb,
			unit: 'MB',
			target: `<= ${RSS_MB} MB`,
			met: run.peakRssMb <= RSS_MB,
		},
		{
			figure: `${run.name}: Redis bytes per recipient at peak`,
			value: run.peakBytesPerRecipient,
			unit: 'B',
			...(earlierBytes === undefined
				? {}
				: {
						target: `<= benchmark 3's ${earlierBytes} B`,
						met: run.peakBytesPerRecipient <= earlierBytes,
					}),
		},
	];
}

/** A core used to this share at most: the rest is headroom for bursts, retries and the feeder. */
const CORE_SHARE = 0.7;

/** What the measured per-recipient costs carry: sends a second per Redis core and per worker core, and numbers at typical rates. */
function scaleFigures(run: Run): Figure[] {
	const perRedisCore = 1e6 / run.redisCpuMicrosPerRecipient;
	const perWorkerCore = 1000 / run.workerCpuMsPerSend;
	const numbersAt = (capacity: number) =>
		[80, 250, 1000].map((rate) => `${Math.floor((capacity * CORE_SHARE) / rate)} at ${rate}/s`).join(', ');
	return [
		{
			figure: `scale: sends a second per core, Redis (1 s / server CPU per recipient) / worker (1 s / CPU per send)`,
			value: `${round(perRedisCore).toLocaleString('en-US')} / ${round(perWorkerCore).toLocaleString('en-US')}`,
		},
		{
			figure: `scale: numbers one Redis core carries at ${CORE_SHARE * 100}% (one master of a cluster the same)`,
			value: numbersAt(perRedisCore),
		},
		{
			figure: 'scale: numbers a 3-master Redis Cluster carries (numbers spread evenly over slots)',
			value: numbersAt(3 * perRedisCore),
		},
		{
			figure: `scale: worker processes (a core each, at ${CORE_SHARE * 100}%) for 10 numbers at 1,000/s`,
			value: Math.ceil(10_000 / (perWorkerCore * CORE_SHARE)),
		},
	];
}

/** Benchmark 3's Redis bytes per recipient at peak, from this run or the last one recorded. */
function memoryBenchBytes(earlier: Map<string, BenchResult>): number | undefined {
	const memory = earlier.get('memory') ?? readResult('memory');
	const figure = memory?.figures.find((entry) => /Redis bytes per recipient at peak/.test(entry.figure));
	const value = typeof figure?.value === 'number' ? figure.value : Number.parseFloat(String(figure?.value ?? ''));
	return Number.isFinite(value) ? value : undefined;
}

/** Benchmark 5's sends answered per CPU second of the sandbox, from this run or the last one recorded. */
function sandboxCapacity(earlier: Map<string, BenchResult>): string {
	const sandbox = earlier.get('sandbox') ?? readResult('sandbox');
	const figure = sandbox?.figures.find((entry) => entry.figure.startsWith('B8 send: capacity per core'));
	return figure ? `${String(figure.value)}${figure.unit ? ` ${figure.unit}` : ''}` : 'not measured';
}

export async function benchCeiling(redisUrl: string, earlier: Map<string, BenchResult>): Promise<BenchResult> {
	const started = Date.now();
	const plans: Plan[] = [
		{ name: 'ceiling', rate: 1000, recipients: size(100_000, 5_000), tracking: false, seed: 140 },
		{ name: 'tracking on', rate: 1000, recipients: size(100_000, 5_000), tracking: true, seed: 140 },
		{ name: 'middle', rate: 100, recipients: size(10_000, 600), tracking: false, seed: 141 },
		{ name: 'low', rate: 4, recipients: size(400, 40), tracking: false, seed: 142 },
		...[
			{ name: 'ceiling', rate: 1000, recipients: size(100_000, 5_000), seed: 144 },
			{ name: 'middle', rate: 100, recipients: size(10_000, 600), seed: 145 },
			{ name: 'low', rate: 4, recipients: size(400, 40), seed: 146 },
		].map((plan) => ({
			...plan,
			name: `${plan.name}, room ${SMALL_ROOM_MS}ms`,
			tracking: false,
			roomMs: SMALL_ROOM_MS,
		})),
	];
	const runs: Run[] = [];
	for (const plan of plans) runs.push(await runAt(redisUrl, plan));
	const [ceiling, tracked, middle, low, smallCeiling, smallMiddle, smallLow] = runs;
	const earlierBytes = memoryBenchBytes(earlier);
	const figures: Figure[] = [
		...rateFiguresOf(ceiling),
		...costFigures(ceiling, earlierBytes),
		{
			figure: `${ceiling.name}: claim to arrival at the sandbox, ms: p50 / p99 / p99.9 / max`,
			value: `${ceiling.claimToArrivalMs.join(' / ')} (the rate span's room: ${ceiling.roomMs} ms)`,
		},
		{ figure: "the sandbox's capacity (benchmark 5): sends per CPU second", value: sandboxCapacity(earlier) },
		...scaleFigures(ceiling),
		...rateFiguresOf(tracked),
		{
			figure: 'tracking on / off: sustained send rate',
			value: round(tracked.steadyRate / ceiling.steadyRate, 3),
			target: `>= ${SHARE} (the sends unaffected)`,
			met: tracked.steadyRate / ceiling.steadyRate >= SHARE,
		},
		{
			figure: 'tracking on: most A1 + B7 requests in any sliding second (A1 checks in all)',
			value: `${tracked.maxSlidingChecks ?? 0} (${tracked.statusChecks ?? 0})`,
			target: `<= RUNNER_TRACKING_RATE ${TRACKING_RATE}, and > 0 checks`,
			met: (tracked.maxSlidingChecks ?? 0) <= TRACKING_RATE && (tracked.statusChecks ?? 0) > 0,
		},
		{ figure: 'tracking on: worker CPU per send', value: tracked.workerCpuMsPerSend, unit: 'ms' },
		{ figure: 'tracking on: worker peak RSS', value: tracked.peakRssMb, unit: 'MB' },
		...[middle, low, smallCeiling, smallMiddle, smallLow].flatMap(rateFiguresOf),
		{
			figure: `ceiling, room ${SMALL_ROOM_MS}ms: claim to arrival at the sandbox, ms: p50 / p99 / p99.9 / max`,
			value: smallCeiling.claimToArrivalMs.join(' / '),
		},
		{
			figure: `ceiling, room ${SMALL_ROOM_MS}ms: worker CPU per send; Redis CPU per recipient, server; script calls per recipient`,
			value: `${smallCeiling.workerCpuMsPerSend} ms; ${smallCeiling.redisCpuMicrosPerRecipient} µs; ${smallCeiling.scriptCallsPerRecipient}`,
		},
		{ figure: 'load average at the end of each run', value: runs.map((run) => run.loadAtEnd[0]).join(' / ') },
	];
	return {
		name: 'ceiling',
		title: "Benchmark 14: one number at the channel's ceiling",
		quick: QUICK,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures,
		notes: [
			`One \`convo-runner worker\` as shipped, RUNNER_CONCURRENCY ${CONCURRENCY}, the sandbox adding ${LATENCY_MS} ms to every send; each run its own campaign on one number. The start gate's room is the default ${Math.round(SPAN_ROOM * 1000)} ms but in the runs named "room ${SMALL_ROOM_MS}ms" (RUNNER_RATE_ROOM=${SMALL_ROOM_MS}ms).`,
			"Rates by each send's arrival at the sandbox (request.receivedAt); sustained = the middle 90% of the sends. Redis figures are Redis-wide from the create to completion (the campaign create included).",
			TAP_NOTE,
		],
		details: { runs },
	};
}

/** `--only million`: 1,000,000 recipients at 1,000/s end to end, every process's memory sampled (run once and recorded). */
export async function benchMillion(redisUrl: string, earlier: Map<string, BenchResult>): Promise<BenchResult> {
	const started = Date.now();
	const run = await runAt(redisUrl, {
		name: 'million',
		rate: 1000,
		recipients: size(1_000_000, 20_000),
		tracking: false,
		seed: 143,
	});
	return {
		name: 'million',
		title: 'Benchmark 15: a 1,000,000-recipient campaign at 1,000/s',
		quick: QUICK,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures: [
			...rateFiguresOf(run),
			...costFigures(run, memoryBenchBytes(earlier)),
			{ figure: 'create to completed', value: round((Date.now() - started) / 60_000, 1), unit: 'min' },
			{ figure: 'worker RSS every 10 s (MB), first / middle / last', value: threeOf(run.rssSamplesMb) },
			{ figure: 'Redis used memory every 10 s (MB), first / middle / last', value: threeOf(run.usedMemorySamplesMb) },
		],
		notes: ['Not in the default run: `npm run bench -- --only million`.', TAP_NOTE],
		details: { run },
	};
}

const threeOf = (samples: number[]) =>
	samples.length === 0
		? 'none'
		: [samples[0], samples[Math.floor(samples.length / 2)], samples[samples.length - 1]].join(' / ');
