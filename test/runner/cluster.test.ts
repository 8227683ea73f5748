/**
 * The same 1,000-recipient campaign, through the same faults (10% 500s, 5% 429s with Retry-After,
 * 50 ms latency), on a 3-node Redis Cluster started on loopback: the runner process and the
 * in-process core both connect with REDIS_CLUSTER_NODES and a hash-tagged prefix; every recipient
 * ends final and the sandbox's own log holds exactly one message per `sent` recipient.
 */
import { Cluster } from 'ioredis';

import { campaignStatus, createCampaign } from '../../runner/src/core';
import { masters } from '../../runner/src/redis';
import {
	dumpKeys,
	expectNoSecret,
	expectReportMatchesLog,
	positionalTemplate,
	report,
	scanKeys,
	setFault,
	startRedisCluster,
	startRunnerUnderTest,
	templateSends,
	waitFor,
	writeRecipientsCsv,
	type RunnerUnderTest,
} from './support';

jest.setTimeout(240_000);

let cluster: Awaited<ReturnType<typeof startRedisCluster>> | undefined;
let runner: RunnerUnderTest | undefined;

beforeAll(async () => {
	cluster = await startRedisCluster(3);
	runner = await startRunnerUnderTest({ clusterNodes: cluster.nodes }, { RUNNER_CONCURRENCY: '20' });
});
afterAll(async () => {
	await runner?.close();
	await cluster?.stop();
});

test('1,000 recipients through faults on a 3-node Redis Cluster: one message per sent recipient, report equals the log', async () => {
	if (!runner) throw new Error('setup failed');
	const { sandbox, business, context, env } = runner;
	expect(env.REDIS_URL).toBeUndefined();
	expect(context.redis).toBeInstanceOf(Cluster);

	await setFault(sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs: 50, errorRate: 0.1, errorStatus: 500, rateLimit: { retryAfterSeconds: 1, rate: 0.05 } });
	const { path, phones } = writeRecipientsCsv(1000, { seed: 3 });
	const worker = runner.spawnWorker();
	const created = await createCampaign(context, { templateId: positionalTemplate(business).id, from: business.phoneNumbers[0], source: path, rate: 200 });
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	expect(created.accepted).toBe(1000);

	const status = await waitFor('the campaign to complete', async () => {
		const current = await campaignStatus(context, created.id);
		return current.state === 'completed' ? current : undefined;
	}, 180_000);
	expect(status.counts.pending + status.counts.claimed).toBe(0);

	const sends = await templateSends(sandbox);
	const rows = await report(context, created.id);
	expect(rows.map((row) => row.phone)).toEqual(phones);
	expectReportMatchesLog(rows, sends);
	// 500s are retried and get through (the sandbox fails every 10th call, never one recipient five times).
	expect(status.counts.sent).toBe(1000);
	expect(sends).toHaveLength(1000);
	expect(rows.filter((row) => row.attempts > 1).length).toBeGreaterThan(50);

	// It really ran on the cluster: three masters, and the run's keys sit on one of them (the prefix's hash tag).
	const nodes = masters(context.redis);
	expect(nodes).toHaveLength(3);
	const holding = [];
	for (const node of nodes) if ((await scanKeys(node, env.RUNNER_PREFIX as string)).length > 0) holding.push(node.options.port);
	expect(holding).toHaveLength(1);

	expectNoSecret(business, { redis: await dumpKeys(context.redis, env.RUNNER_PREFIX as string), worker: worker.output() });
});
