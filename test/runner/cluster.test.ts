/**
 * 12 campaigns on 6 sending numbers, through the faults test's faults (10% 500s, 5% 429s with
 * Retry-After: 0, 50 ms latency; the send backoff from 100 ms, as there), on a 3-master Redis
 * Cluster started on loopback: the runner process and the in-process core both connect with
 * REDIS_CLUSTER_NODES. The faults test's guarantees hold (every recipient final, the sandbox's own
 * log holds exactly one message per `sent` recipient, from the campaign's number, and every call
 * it received is a message, a hold or a retry the runner counted), and the work is spread: every master holds keys and runs commands
 * of the run, each at least half the part its sending numbers are of the six (#20: a number's
 * group is its slot, runner/src/keys.ts). The shares are printed. Then the suppression list (#23),
 * whose list and per-number copies sit in different slots.
 */
import { Cluster } from 'ioredis';

import { addSuppression } from '../../runner/src/core/audience';
import { campaignStatus, cancel, createCampaign, inlineRecords } from '../../runner/src/core/campaigns';
import { repairCopy } from '../../runner/src/audience/suppression';
import { findCampaign } from '../../runner/src/campaigns/store';
import { masters } from '../../runner/src/redis';
import { commandsRun, masterShares, numbersByMaster, partOf, sharesTable } from './clusterShares';
import {
	dumpKeys,
	expectNoSecret,
	expectReportMatchesLog,
	positionalTemplate,
	report,
	setFault,
	startRedisCluster,
	startRunnerUnderTest,
	templateSends,
	waitFor,
	waitForFeederTick,
	writeRecipientsCsv,
	type RunnerUnderTest,
} from './support';

jest.setTimeout(300_000);

const NUMBERS = 6;
const CAMPAIGNS = 12;
const RECIPIENTS = 100;

let cluster: Awaited<ReturnType<typeof startRedisCluster>> | undefined;
let runner: RunnerUnderTest | undefined;

beforeAll(async () => {
	cluster = await startRedisCluster(3);
	runner = await startRunnerUnderTest(
		{ clusterNodes: cluster.nodes },
		{ RUNNER_CONCURRENCY: '20', RUNNER_SEND_BACKOFF: '100ms' },
	);
});
afterAll(async () => {
	await runner?.close();
	await cluster?.stop();
});

test('12 campaigns on 6 numbers through faults on a 3-master Redis Cluster: one message per sent recipient, keys and commands on every master', async () => {
	if (!runner) throw new Error('setup failed');
	const { sandbox, business, context, env } = runner;
	expect(env.REDIS_URL).toBeUndefined();
	expect(context.redis).toBeInstanceOf(Cluster);
	expect(masters(context.redis)).toHaveLength(3);

	// The fixture's first six numbers, as the default three-way slot split places them: every master serves at least one.
	const numbers = business.phoneNumbers.slice(0, NUMBERS);
	const served = await numbersByMaster(context.redis, context.keys, numbers);
	expect([...served.values()].map((held) => held.length).every((count) => count >= 1)).toBe(true);

	const endpoint = 'POST /api/external/v2/send-template';
	await setFault(sandbox, {
		endpoint,
		latencyMs: 50,
		errorRate: 0.1,
		errorStatus: 500,
		rateLimit: { retryAfterSeconds: 0, rate: 0.05 },
	});
	const before = await commandsRun(context.redis);
	const worker = runner.spawnWorker();
	const campaigns = [];
	for (let i = 0; i < CAMPAIGNS; i++) {
		const from = numbers[i % NUMBERS];
		const { path, phones } = writeRecipientsCsv(RECIPIENTS, { seed: 40 + i });
		const created = await createCampaign(context, {
			templateId: positionalTemplate(business).id,
			from,
			source: path,
			rate: 50,
		});
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		expect(created.accepted).toBe(RECIPIENTS);
		campaigns.push({ id: created.id, from, phones });
	}

	for (const campaign of campaigns) {
		const status = await waitFor(
			`campaign ${campaign.id} to complete`,
			async () => {
				const current = await campaignStatus(context, campaign.id);
				return current.state === 'completed' ? current : undefined;
			},
			240_000,
		);
		expect(status.counts.pending + status.counts.claimed).toBe(0);
		// 500s are retried and get through (the sandbox fails every 10th call, never one recipient five times).
		expect(status.counts.sent).toBe(RECIPIENTS);
	}
	// Measured before anything else reads the cluster: the run's own commands only (and the feeder's ticks meanwhile).
	const shares = await masterShares(context.redis, context.keys, numbers, before);
	process.stdout.write(
		`\nRedis Cluster shares, ${CAMPAIGNS} campaigns on ${NUMBERS} numbers, ${CAMPAIGNS * RECIPIENTS} recipients:\n${sharesTable(shares)}\n`,
	);

	const sends = await templateSends(sandbox);
	expect(sends).toHaveLength(CAMPAIGNS * RECIPIENTS);
	let retried = 0;
	for (const campaign of campaigns) {
		const rows = await report(context, campaign.id);
		expect(rows.map((row) => row.phone)).toEqual(campaign.phones);
		expectReportMatchesLog(rows, sends);
		retried += rows.filter((row) => row.attempts > 1).length;
		const mine = new Set(campaign.phones);
		expect(new Set(sends.filter((message) => mine.has(message.to)).map((message) => message.from))).toEqual(
			new Set([campaign.from]),
		);
	}
	expect(retried).toBeGreaterThan(60);
	// Every call the sandbox received is a message, or a hold or a retry the runner counted.
	let heldAndRetried = 0;
	for (const campaign of campaigns) {
		const record = await findCampaign(context, campaign.id);
		heldAndRetried += (record?.holds ?? 0) + (record?.retries ?? 0);
	}
	const { counts } = (await (await fetch(`${sandbox.baseUrl}/__sandbox/requests`)).json()) as {
		counts: Record<string, number>;
	};
	expect(counts[endpoint]).toBe(CAMPAIGNS * RECIPIENTS + heldAndRetried);

	// Each master's part of the per-number work is its numbers' part of the six (equal campaigns at
	// equal rates). Faults fall unevenly and the global group ({g}: lists, the control queue) adds
	// to one master, so each must hold at least half its numbers' part, and as each serves one
	// number or more, never less than 1/12 (about 8%) of the keys and of the commands. With the
	// fixture's numbers on the default split (1, 1 and 4 numbers) the parts are about 1/6, 1/6, 2/3.
	// Under one {convo} tag (before #20) one master held 100% and the others nothing.
	const expected = shares.map((share) => share.numbers.length / NUMBERS);
	const least = (i: number) => Math.max(expected[i], 1 / NUMBERS) / 2;
	const keys = partOf(shares, 'keys');
	const commands = partOf(shares, 'commands');
	shares.forEach((share, i) => {
		expect({ master: share.address, keys: keys[i] >= least(i), commands: commands[i] >= least(i) }).toEqual({
			master: share.address,
			keys: true,
			commands: true,
		});
	});

	expectNoSecret(business, {
		redis: await dumpKeys(context.redis, env.RUNNER_PREFIX as string),
		worker: worker.output(),
	});
});

test("the suppression list on the Cluster: a change reaches every number's copy, each in its own slot; a create suppresses the row, a lost copy is repaired", async () => {
	if (!runner) throw new Error('setup failed');
	const { business, context } = runner;
	const numbers = business.phoneNumbers.slice(0, NUMBERS);
	const phone = '4917066600001';
	// Each number holds a copy while a campaign of it is not finished: one scheduled for tomorrow each.
	const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
	const waiting: string[] = [];
	for (const from of numbers) {
		const created = await createCampaign(
			context,
			{ templateId: positionalTemplate(business).id, from, source: 'rows', rate: 50, at: tomorrow },
			inlineRecords([{ phone: '4917066600002', 1: 'a', 2: 'b' }]),
		);
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		waiting.push(created.id);
	}
	expect(
		await addSuppression(context, { phone: `+${phone}`, reason: 'cluster', source: 'operator' }, 'phone'),
	).toMatchObject({ added: true });
	for (const from of numbers)
		expect(await context.redis.hget(context.keys.suppression.copy(from), phone)).toMatch(
			/^on the suppression list: cluster \(operator, /,
		);

	const created = await createCampaign(
		context,
		{ templateId: positionalTemplate(business).id, from: numbers[1], source: 'rows', rate: 50 },
		inlineRecords([{ phone, 1: 'a', 2: 'b' }]),
	);
	expect(created).toMatchObject({ kind: 'campaign', accepted: 0, suppressed: 1, state: 'completed' });

	// A copy left behind its version (a process killed between the list's write and the copy's).
	await context.redis.del(context.keys.suppression.copy(numbers[2]));
	await context.redis.set(context.keys.suppression.copyVersion(numbers[2]), '0');
	expect(await repairCopy(context, numbers[2])).toBe(1);
	expect(await context.redis.hexists(context.keys.suppression.copy(numbers[2]), phone)).toBe(1);

	// Cancelled, a number's campaign lets its copy go at the feeder's tick (its script reads the campaign in the number's slot).
	await cancel(context, waiting[3]);
	await waitForFeederTick(context);
	await waitForFeederTick(context);
	expect(await context.redis.exists(context.keys.suppression.copyVersion(numbers[3]))).toBe(0);
	expect(await context.redis.sismember(context.keys.suppression.copies, numbers[3])).toBe(0);
	expect(await context.redis.exists(context.keys.suppression.copyVersion(numbers[4]))).toBe(1);
});
