/**
 * Benchmark 9 (#22): delivery tracking beside a campaign's sends. The same campaign (10,000
 * recipients, 100/s on one number, 50 ms latency, one runner process) runs twice against a
 * sandbox drawing delivery outcomes (90% delivered, 60% read, 5% failed, short delays):
 *
 *   off  the worker has the send role alone (RUNNER_TRACKING=off): what sending does alone.
 *   on   A1 checks at +1 s, +3 s, +10 s after each send (CONVO_BASE_URL and CONVO_ACCESS_TOKEN set),
 *        RUNNER_TRACKING_RATE 50: the checks run while the campaign sends.
 *
 * Every figure is read from the sandbox's own logs: each send's arrival (request.receivedAt), each
 * A1 status request's and each B7 lookup's time (GET /__sandbox/delivery/checks); tracking's Redis
 * cost per message is Redis's own count (INFO commandstats), on less off.
 */
import { Redis } from 'ioredis';

import {
	callsBetween,
	commandCalls,
	commandMicros,
	rateFigures,
	round,
	size,
	sleep,
	type BenchResult,
	type Figure,
} from './lib/common';
import { runCampaign, sendsFrom, setFault, SEND_ENDPOINT, workerPeaksMb } from './lib/stack';
import { deliveryChecks, setDelivery, startRunnerUnderTest, type DeliveryChecks } from '../test/runner/support';

const RATE = 100;
const TRACKING_RATE = 50;
const LATENCY_MS = 50;
/** After the campaign completes, checks keep coming: this much of them is counted too. */
const AFTER_MS = 10_000;

interface Mode {
	name: 'off' | 'on';
	env: NodeJS.ProcessEnv;
}

export interface TrackingRun {
	name: string;
	sends: number;
	steadyRate: number;
	maxSlidingSends: number;
	/** A1 status requests, and B7 lookups, during the sends and AFTER_MS after. */
	statusChecks: number;
	conversationLookups: number;
	/** Checks that arrived between the first and the last send. */
	checksDuringSends: number;
	maxSlidingChecks: number;
	maxSlidingRequests: number;
	peakRssMb: number[];
	/** Redis commands and commandstats usec from the worker's start to AFTER_MS after completion. */
	redisCommands: number;
	redisMicros: number;
}

const times = (byKey: Record<string, string[]>) =>
	Object.values(byKey).flatMap((list) => list.map((iso) => Date.parse(iso)));

async function runMode(redisUrl: string, mode: Mode, recipients: number, seed: number): Promise<TrackingRun> {
	const stack = await startRunnerUnderTest(redisUrl, { RUNNER_CONCURRENCY: '10', LOG_LEVEL: 'warn', ...mode.env });
	try {
		await setFault(stack.sandbox, { endpoint: SEND_ENDPOINT, latencyMs: LATENCY_MS });
		await setDelivery(stack.sandbox, {
			seed: 'bench-tracking',
			delivered: 0.9,
			read: 0.6,
			failed: [
				{ share: 0.03, reason: 'The recipient cannot receive messages on this channel' },
				{ share: 0.02, reason: 'Message expired before delivery' },
			],
			delays_ms: { sent: 200, delivered: 500, read: 1500, failed: 800 },
		});
		const redis = new Redis(redisUrl);
		const callsBefore = await commandCalls(redis);
		const microsBefore = await commandMicros(redis);
		stack.spawnWorker(
			mode.name === 'on'
				? { CONVO_BASE_URL: stack.sandbox.baseUrl, CONVO_ACCESS_TOKEN: stack.business.accessToken }
				: {},
		);
		await runCampaign(stack, recipients, RATE, seed);
		await sleep(AFTER_MS);
		const redisCommands = [...callsBetween(callsBefore, await commandCalls(redis)).values()].reduce(
			(sum, n) => sum + n,
			0,
		);
		const redisMicros = (await commandMicros(redis)) - microsBefore;
		redis.disconnect();
		const peaks = workerPeaksMb(stack);
		const sendTimes = (await sendsFrom(stack)).map((message) =>
			Date.parse(message.request?.receivedAt ?? message.createdAt),
		);
		const rates = rateFigures(sendTimes);
		const checks: DeliveryChecks = await deliveryChecks(stack.sandbox);
		const status = times(checks.status);
		const lookups = times(checks.conversations);
		const [first, last] = [Math.min(...sendTimes), Math.max(...sendTimes)];
		return {
			name: mode.name,
			sends: sendTimes.length,
			steadyRate: round(rates.steadyRate, 1),
			maxSlidingSends: rates.maxSliding,
			statusChecks: status.length,
			conversationLookups: lookups.length,
			checksDuringSends: status.filter((time) => time >= first && time <= last).length,
			maxSlidingChecks: rateFigures(status).maxSliding,
			maxSlidingRequests: rateFigures([...status, ...lookups]).maxSliding,
			peakRssMb: peaks.map((peak) => round(peak)),
			redisCommands,
			redisMicros,
		};
	} finally {
		await stack.close();
	}
}

export async function benchTracking(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const recipients = size(10_000, 1_000);
	const modes: Mode[] = [
		{ name: 'off', env: { RUNNER_TRACKING: 'off', RUNNER_TRACKING_RATE: String(TRACKING_RATE) } },
		{ name: 'on', env: { RUNNER_TRACKING_SCHEDULE: '1s,3s,10s', RUNNER_TRACKING_RATE: String(TRACKING_RATE) } },
	];
	const runs: TrackingRun[] = [];
	// The same recipients both times (one seed), so the sandbox draws the same outcomes.
	for (const mode of modes) runs.push(await runMode(redisUrl, mode, recipients, 90));
	const figures: Figure[] = [];
	const floor = 0.95 * RATE;
	for (const run of runs) {
		figures.push(
			{
				figure: `tracking ${run.name}: sends in the sandbox log`,
				value: run.sends,
				target: `exactly ${recipients.toLocaleString('en-US')}`,
				met: run.sends === recipients,
			},
			{
				figure: `tracking ${run.name}: sustained send rate`,
				value: run.steadyRate,
				unit: '/s',
				target: `>= 0.95 x ${RATE}/s = ${floor}/s`,
				met: run.steadyRate >= floor,
			},
			{ figure: `tracking ${run.name}: sustained / limit`, value: round(run.steadyRate / RATE, 3) },
			{
				figure: `tracking ${run.name}: most sends in any sliding second`,
				value: run.maxSlidingSends,
				target: `<= ${RATE}`,
				met: run.maxSlidingSends <= RATE,
			},
		);
	}
	const [off, on] = runs;
	figures.push(
		{ figure: 'on / off: sustained send rate', value: round(on.steadyRate / off.steadyRate, 3) },
		{
			figure: 'tracking on: A1 checks while the campaign sent (first to last send)',
			value: on.checksDuringSends,
			target: '> 0 (checks ran during the sends)',
			met: on.checksDuringSends > 0,
		},
		{
			figure: `tracking on: A1 checks (and B7 reason lookups) until ${AFTER_MS / 1000} s after completion`,
			value: `${on.statusChecks} (+ ${on.conversationLookups})`,
		},
		{
			figure: 'tracking on: most A1 checks in any sliding second',
			value: on.maxSlidingChecks,
			target: `<= RUNNER_TRACKING_RATE ${TRACKING_RATE}`,
			met: on.maxSlidingChecks <= TRACKING_RATE,
		},
		{
			figure: 'tracking on: most A1 + B7 tracking requests in any sliding second',
			value: on.maxSlidingRequests,
			target: `<= ${TRACKING_RATE}`,
			met: on.maxSlidingRequests <= TRACKING_RATE,
		},
		{
			figure: 'tracking off: A1 checks and B7 lookups',
			value: off.statusChecks + off.conversationLookups,
			target: '0',
			met: off.statusChecks + off.conversationLookups === 0,
		},
		{
			figure: 'runner peak RSS, off / on',
			value: `${off.peakRssMb.join(' + ')} / ${on.peakRssMb.join(' + ')}`,
			unit: 'MB',
		},
		{
			figure: "tracking's Redis cost per sent message (on less off): commands / commandstats usec",
			value: `${round((on.redisCommands - off.redisCommands) / recipients, 1)} / ${round((on.redisMicros - off.redisMicros) / recipients, 1)} µs`,
		},
	);
	return {
		name: 'tracking',
		title: 'Benchmark 9: delivery tracking beside the sends',
		quick: recipients !== 10_000,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures,
		notes: [
			`${recipients.toLocaleString('en-US')} recipients at ${RATE}/s on one number, ${LATENCY_MS} ms latency, concurrency 10, one worker process; the sandbox draws 90% delivered, 60% read, 5% failed (two reasons), delays 200 / 500 / 1,500 / 800 ms.`,
			`off: the worker started with RUNNER_TRACKING=off (the send role alone: no walk, no check). on: A1 at +1 s, +3 s, +10 s, RUNNER_TRACKING_RATE ${TRACKING_RATE}.`,
			`Redis cost: INFO commandstats calls and usec from the worker's start to ${AFTER_MS / 1000} s after completion, on less off, per recipient: the walk enrolling each sent message and its checks made by then (the last sends' +10 s checks may fall after it).`,
			"Sustained rate = the middle 90% of the sends by the sandbox's arrival time; checks are timed by the sandbox's log of A1 status requests and B7 lookups (GET /__sandbox/delivery/checks). A failure's B7 reason lookup is made in the place of the A1 check that found it.",
		],
		details: { runs },
	};
}
