/**
 * The frequency cap on a 3-master Redis Cluster (#23): the claim's script reads and writes a
 * phone's key it builds from a prefix among its KEYS (audience/cap.ts), in the number's slot, so
 * a cluster runs it on that slot's master (a key outside it would be refused). Three numbers (the
 * fixture's first three), each sending twice to the same phones: the second campaign of each is
 * capped, and a dry run on the cluster counts them.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { campaignStatus, createCampaign } from '../../runner/src/core/campaigns';
import {
	sendsByPhone,
	positionalTemplate,
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
	runner = await startRunnerUnderTest({ clusterNodes: cluster.nodes }, { RUNNER_FREQUENCY_CAP: '1/24h' });
});
afterAll(async () => {
	await runner?.close();
	await cluster?.stop();
});

test('on a Redis Cluster, a second campaign to the same phones from each of three numbers is capped; a dry run counts them', async () => {
	if (!runner) throw new Error('setup failed');
	const { business, context } = runner;
	runner.spawnWorker();
	const { phones } = writeRecipientsCsv(20, { seed: 40 });
	const path = join(mkdtempSync(join(tmpdir(), 'convo-cap-')), 'recipients.csv');
	writeFileSync(path, `phone,1,2\n${phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`).join('\n')}\n`);
	const run = async (from: string) => {
		const created = await createCampaign(context, {
			templateId: positionalTemplate(business).id,
			from,
			source: path,
			rate: 50,
		});
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		return waitFor(
			`campaign ${created.id} to complete`,
			async () => {
				const status = await campaignStatus(context, created.id);
				return status.state === 'completed' ? status : undefined;
			},
			60_000,
		);
	};
	for (const from of business.phoneNumbers.slice(0, 3)) {
		expect((await run(from)).counts).toMatchObject({ sent: 20, capped: 0 });
		const dry = await createCampaign(context, {
			templateId: positionalTemplate(business).id,
			from,
			source: path,
			dryRun: true,
		});
		expect(dry.kind === 'dry_run' && dry.counts).toEqual({ accepted: 20, rejected: 0, suppressed: 0, capped: 20 });
		expect((await run(from)).counts).toMatchObject({ sent: 0, capped: 20 });
	}
	// One message per phone from each number: the cap is per sending number.
	const sends = await templateSends(runner.sandbox);
	expect([...sendsByPhone(sends).values()].map((list) => list.length)).toEqual(phones.map(() => 3));
});
