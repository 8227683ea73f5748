/**
 * Redis, with AOF persistence as production runs it (appendonly yes, appendfsync always), killed
 * with SIGKILL mid-campaign and started again on the same port and folder: the worker rides out
 * the outage, the campaign completes, and the guarantees hold against the sandbox's own log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { campaignStatus, createCampaign } from '../../runner/src/core/campaigns';
import { startPrivateRedis, type PrivateRedis } from '../../runner/src/devRedis';
import {
	dumpKeys,
	expectNoSecret,
	expectReportMatchesLog,
	positionalTemplate,
	report,
	startRunnerUnderTest,
	templateSends,
	waitFor,
	writeRecipientsCsv,
	type RunnerUnderTest,
} from './support';

jest.setTimeout(240_000);

/** The settings the guarantees need: every acknowledged ledger write is on disk before the reply. */
const PERSISTENT = ['--appendonly', 'yes', '--appendfsync', 'always'];

let dir: string;
let redis: PrivateRedis | undefined;
let runner: RunnerUnderTest | undefined;

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), 'convo-redis-aof-'));
	redis = await startPrivateRedis(PERSISTENT, dir);
	runner = await startRunnerUnderTest(redis.url, { RUNNER_CONCURRENCY: '10' });
});
afterAll(async () => {
	await runner?.close();
	await redis?.stop();
	rmSync(dir, { recursive: true, force: true });
});

test('Redis killed and restarted mid-campaign: the campaign completes, one message per sent recipient, report equals the log', async () => {
	if (!runner || !redis) throw new Error('setup failed');
	const { sandbox, business, context } = runner;
	const { path, phones } = writeRecipientsCsv(1000, { seed: 2 });
	const worker = runner.spawnWorker();
	const created = await createCampaign(context, {
		templateId: positionalTemplate(business).id,
		from: business.phoneNumbers[0],
		source: path,
		rate: 100,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	expect(created.accepted).toBe(1000);

	const sentBeforeKill = await waitFor(
		'300 sends before the kill',
		async () => {
			const count = (await templateSends(sandbox)).length;
			return count >= 300 ? count : undefined;
		},
		90_000,
		50,
	);
	const port = Number(new URL(redis.url).port);
	const killed = new Promise((resolve) => redis?.process.once('exit', resolve));
	redis.process.kill('SIGKILL');
	await killed;
	await new Promise((resolve) => setTimeout(resolve, 1500));
	redis = await startPrivateRedis(PERSISTENT, dir, port);

	const status = await waitFor(
		'the campaign to complete after Redis returned',
		async () => {
			const current = await campaignStatus(context, created.id);
			return current.state === 'completed' ? current : undefined;
		},
		150_000,
	);

	// Mid-campaign for real: the kill came before the end, and the worker outlived the outage.
	expect(sentBeforeKill).toBeLessThan(1000);
	expect(worker.child.exitCode).toBeNull();

	const sends = await templateSends(sandbox);
	const rows = await report(context, created.id);
	expect(rows.map((row) => row.phone)).toEqual(phones);
	expect(status.counts.pending + status.counts.claimed).toBe(0);
	expect(rows.filter((row) => row.outcome === 'pending' || row.outcome === 'claimed')).toEqual([]);
	expectReportMatchesLog(rows, sends);
	expect(rows.filter((row) => row.outcome === 'sent')).toHaveLength(sends.length);

	expectNoSecret(business, {
		redis: await dumpKeys(context.redis, runner.env.RUNNER_PREFIX as string),
		worker: worker.output(),
	});
});
