/**
 * Guarantee 1 and 2 under a faulty service: 10% 500s, 5% 429s with Retry-After, 50 ms latency.
 * Every recipient ends final; the sandbox's own log holds exactly one message per `sent`
 * recipient, with the report's message id, and none for any other.
 */
import { createCampaign, campaignStatus } from '../../runner/src/core/campaigns';
import {
	dumpKeys,
	expectNoSecret,
	expectReportMatchesLog,
	positionalTemplate,
	report,
	setFault,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(300_000);

const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '20' });

test('1,000 recipients through 500s, 429s and latency: one message per sent recipient, report equals the log', async () => {
	const endpoint = 'POST /api/external/v2/send-template';
	await setFault(runner.sandbox, {
		endpoint,
		latencyMs: 50,
		errorRate: 0.1,
		errorStatus: 500,
		rateLimit: { retryAfterSeconds: 1, rate: 0.05 },
	});
	const { path, phones } = writeRecipientsCsv(1000, { seed: 1 });
	const worker = runner.spawnWorker();
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: path,
		rate: 200,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	expect(created.accepted).toBe(1000);

	const status = await waitFor(
		'the campaign to complete',
		async () => {
			const current = await campaignStatus(runner.context, created.id);
			return current.state === 'completed' ? current : undefined;
		},
		240_000,
	);
	expect(status.counts.pending + status.counts.claimed).toBe(0);

	const sends = await templateSends(runner.sandbox);
	const rows = await report(runner.context, created.id);
	expect(rows).toHaveLength(1000);
	expect(rows.map((row) => row.phone)).toEqual(phones);
	expectReportMatchesLog(rows, sends);
	// 500s are retried and almost always get through; the sandbox fails every 10th call, never one recipient five times.
	expect(status.counts.sent).toBe(1000);
	expect(sends).toHaveLength(1000);
	expect(rows.filter((row) => row.attempts > 1).length).toBeGreaterThan(50);

	// No secret in Redis or in the worker's logs.
	const dump = await dumpKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string);
	expect(dump.length).toBeGreaterThan(10_000);
	expectNoSecret(runner.business, { redis: dump, worker: worker.output() });
});
