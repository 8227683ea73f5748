/**
 * Benchmark 7 (#20): capacity from a Redis Cluster. 12 campaigns on 6 sending numbers, two per
 * number, each number at RATE/s, 50 ms latency and no faults, two runner worker processes: once on
 * the shared single Redis of the other benchmarks, once on a 3-master cluster of its own on
 * loopback. It prints each master's share of the run's keys, their memory and the commands it ran
 * (INFO commandstats, after minus before), and each number's sustained rate by the sandbox's clock.
 *
 * A master's share follows the sending numbers its slots hold (runner/src/keys.ts): with the
 * fixture's first six numbers on the default three-way split that is 1, 1 and 4 numbers.
 */
import { Cluster } from 'ioredis';

import { createCampaign } from '../runner/src/core/campaigns';
import { masters } from '../runner/src/redis';
import { commandsRun, masterShares, partOf, sharesTable, type MasterShare } from '../test/runner/clusterShares';
import {
	positionalTemplate,
	startRedisCluster,
	startRunnerUnderTest,
	templateSends,
	writeRecipientsCsv,
} from '../test/runner/support';
import { rateFigures, round, size, type BenchResult, type Figure } from './lib/common';
import { SEND_ENDPOINT, setFault, waitForCompletion } from './lib/stack';

const NUMBERS = 6;
const CAMPAIGNS = 12;
/** Sends per second of each number (both of its campaigns ask for it). */
const RATE = 25;
const LATENCY_MS = 50;
const PROCESSES = 2;
const CONCURRENCY = 20;

interface Run {
	target: string;
	sends: number;
	distinctPhones: number;
	shares: MasterShare[];
	perNumber: Array<{ from: string; steadyRate: number; maxSliding: number }>;
	steadyRate: number;
}

/** The 12 campaigns on one Redis target, to their end; what each master did and what the sandbox received. */
async function runOn(target: string | { clusterNodes: string }, recipients: number): Promise<Run> {
	const stack = await startRunnerUnderTest(target, { RUNNER_CONCURRENCY: String(CONCURRENCY), LOG_LEVEL: 'warn' });
	try {
		const { context, business, sandbox } = stack;
		if (typeof target !== 'string' && (!(context.redis instanceof Cluster) || masters(context.redis).length !== 3))
			throw new Error('expected a 3-master Redis Cluster');
		await setFault(sandbox, { endpoint: SEND_ENDPOINT, latencyMs: LATENCY_MS });
		const numbers = business.phoneNumbers.slice(0, NUMBERS);
		// Everything the runner does from here on is counted: the workers' start, the creates, the sends, the feeder.
		const before = await commandsRun(context.redis);
		for (let i = 0; i < PROCESSES; i++) stack.spawnWorker();
		const campaigns: string[] = [];
		for (let i = 0; i < CAMPAIGNS; i++) {
			const { path } = writeRecipientsCsv(recipients, { seed: 60 + i });
			const created = await createCampaign(context, {
				templateId: positionalTemplate(business).id,
				from: numbers[i % NUMBERS],
				source: path,
				rate: RATE,
			});
			if (created.kind !== 'campaign') throw new Error('expected a campaign');
			campaigns.push(created.id);
		}
		// Both of a number's campaigns share its rate: each needs twice its own time.
		for (const id of campaigns) await waitForCompletion(stack, id, 2 * recipients, RATE);
		const shares = await masterShares(context.redis, context.keys, numbers, before);
		const name = typeof target === 'string' ? 'one Redis' : '3-master Redis Cluster';
		console.log(`\n${name}, shares of the run:\n${sharesTable(shares)}`);
		const sends = await templateSends(sandbox);
		const arrival = (message: (typeof sends)[number]) => Date.parse(message.request?.receivedAt ?? message.createdAt);
		const perNumber = numbers.map((from) => {
			const rates = rateFigures(sends.filter((message) => message.from === from).map(arrival));
			return { from, steadyRate: round(rates.steadyRate, 1), maxSliding: rates.maxSliding };
		});
		return {
			target: name,
			sends: sends.length,
			distinctPhones: new Set(sends.map((message) => message.to)).size,
			shares,
			perNumber,
			steadyRate: round(rateFigures(sends.map(arrival)).steadyRate, 1),
		};
	} finally {
		await stack.close();
	}
}

export async function benchCluster(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const recipients = size(1_000, 150);
	const total = CAMPAIGNS * recipients;
	const single = await runOn(redisUrl, recipients);
	const cluster = await startRedisCluster(3);
	let spread: Run;
	try {
		spread = await runOn({ clusterNodes: cluster.nodes }, recipients);
	} finally {
		await cluster.stop();
	}

	const figures: Figure[] = [];
	const shown = (part: number) => `${round(100 * part, 1)}%`;
	const parts = {
		keys: partOf(spread.shares, 'keys'),
		memory: partOf(spread.shares, 'memory'),
		commands: partOf(spread.shares, 'commands'),
	};
	spread.shares.forEach((share, i) => {
		const least = Math.max(share.numbers.length, 1) / NUMBERS / 2;
		figures.push({
			figure: `cluster master ${i + 1} (${share.numbers.length} of ${NUMBERS} numbers): keys / memory / commands`,
			value: `${shown(parts.keys[i])} / ${shown(parts.memory[i])} / ${shown(parts.commands[i])}`,
			target: `keys and commands >= ${shown(least)}`,
			met: parts.keys[i] >= least && parts.commands[i] >= least,
		});
	});
	for (const run of [single, spread]) {
		const commands = run.shares.reduce((sum, share) => sum + share.commands, 0);
		figures.push(
			{
				figure: `${run.target}: sends in the sandbox log`,
				value: run.sends,
				target: `exactly ${total.toLocaleString('en-US')}, each phone once`,
				met: run.sends === total && run.distinctPhones === total,
			},
			{ figure: `${run.target}: Redis commands per recipient, all masters`, value: round(commands / total, 1) },
			{
				figure: `${run.target}: sustained rate of each number`,
				value: run.perNumber.map((number) => number.steadyRate).join(' / '),
				unit: '/s',
				target: `>= 0.95 x ${RATE}/s = ${0.95 * RATE}/s`,
				met: run.perNumber.every((number) => number.steadyRate >= 0.95 * RATE),
			},
			{
				figure: `${run.target}: most sends of a number in any sliding second`,
				value: run.perNumber.map((number) => number.maxSliding).join(' / '),
				target: `<= ${RATE}`,
				met: run.perNumber.every((number) => number.maxSliding <= RATE),
			},
			{ figure: `${run.target}: sustained rate, all numbers together`, value: run.steadyRate, unit: '/s' },
		);
	}
	return {
		name: 'cluster',
		title: 'Benchmark 7: 12 campaigns on 6 numbers, one Redis and a 3-master Redis Cluster',
		quick: recipients !== 1_000,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures,
		notes: [
			`${CAMPAIGNS} campaigns of ${recipients.toLocaleString('en-US')} recipients, two per number, ${NUMBERS} numbers at ${RATE}/s each, ${LATENCY_MS} ms latency, no faults, ${PROCESSES} runner processes with RUNNER_CONCURRENCY ${CONCURRENCY}; first on the benchmarks' one Redis, then on a 3-master Redis Cluster of the benchmark's own on loopback (no replicas, no persistence), all on the same machine.`,
			"A master's share follows the numbers its slots hold (the fixture's first six numbers fall 1, 1 and 4 on the default split): the least share asked of a master is half its numbers' part of the six, and never less than half of one number's.",
			"Commands: INFO commandstats of each master, after minus before (the workers starting, the creates, the sends, the feeder ticks). Memory: MEMORY USAGE of every key of the run, summed per master. Rates: by the sandbox's arrival time of each send, the middle 90% of each number's sends.",
		],
		details: { recipients, runs: [single, spread] },
	};
}
