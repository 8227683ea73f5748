/**
 * A scheduled campaign's start job is queued right before its create commits (campaigns/create.ts),
 * so that no crash falls between a committed campaign and its start. A commit that comes later
 * than the job's 2 s grace (a stalled process, a slow Redis) must still be started: the job looks
 * again instead of ending, and every recipient is sent once, counted in the sandbox's own log.
 */
import { newCampaignId } from '../../runner/src/campaigns/store';
import { addStartJob } from '../../runner/src/jobs';
import { snapshotCampaign } from '../../runner/src/campaigns/create';
import { campaignStatus } from '../../runner/src/core/campaigns';
import { inlineRecords } from '../../runner/src/source';
import { positionalTemplate, sendsByPhone, templateSends, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(120_000);

const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '10' });

beforeAll(() => {
	runner.spawnWorker();
});

test('a commit that comes 6 s after its start job was queued is still started, each recipient sent once', async () => {
	const phones = Array.from({ length: 40 }, (_, i) => `4930${String(7_100_000 + i)}`);
	const id = newCampaignId();
	const startAt = Date.now();
	const snapshot = await snapshotCampaign(runner.context, {
		id,
		name: 'scheduled commit',
		state: 'scheduled',
		startAt,
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		rate: 50,
		source: 'request.json',
		records: inlineRecords(phones.map((phone) => ({ phone, '1': 'Ada', '2': 'today' }))),
		// What core.createCampaign does for a campaign with a start time, then a stall past the grace.
		beforeCommit: async () => {
			await addStartJob(runner.context, { campaign: id, dueAt: startAt }, { afterCommit: true });
			await new Promise((resolve) => setTimeout(resolve, 6000));
		},
	});
	expect(snapshot).toMatchObject({ accepted: 40, rejected: 0 });

	await waitFor(
		'the late-committed campaign to complete',
		async () => ((await campaignStatus(runner.context, id)).state === 'completed' ? true : undefined),
		60_000,
		250,
	);
	const wanted = new Set(phones);
	const sends = (await templateSends(runner.sandbox)).filter((message) => wanted.has(message.to));
	expect(sends).toHaveLength(40);
	expect(sendsByPhone(sends).size).toBe(40);
});
