/**
 * A resume that races a remove can put a schedule's job scheduler back after the remove took it
 * out (the resume read the record before it went): a scheduler with no schedule, firing every time
 * for nothing. Its first firing now takes it out, for campaign and reindex schedules alike. The
 * race's end state is made directly (the remove, then the resume's upsert); a worker process takes
 * the firings, as in production.
 */
import { createCampaign, listCampaigns, removeCampaignSchedule } from '../../runner/src/core/campaigns';
import { createReindex, listReindexRuns, removeReindexSchedule } from '../../runner/src/core/reindex';
import { CAMPAIGN_CRON, REINDEX_CRON } from '../../runner/src/jobs';
import { collectionOf, feedText, freshCollection, products, range, writeFeed } from './reindexSupport';
import { positionalTemplate, useRunnerUnderTest, waitFor, writeRecipientsCsv } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();
const EVERY_SECOND = { pattern: '* * * * * *', tz: 'UTC' };

beforeAll(async () => {
	runner.spawnWorker();
	await freshCollection(runner);
});

/** The scheduler put back is there, and its first firing takes it out. */
async function expectTakenOut(
	queue: { getJobScheduler(id: string): Promise<unknown> },
	scheduler: string,
): Promise<void> {
	expect(await queue.getJobScheduler(scheduler)).toBeDefined();
	await waitFor(
		'the orphaned scheduler to be taken out',
		async () => ((await queue.getJobScheduler(scheduler)) === undefined ? true : undefined),
		30_000,
		100,
	);
}

test("a campaign schedule's scheduler put back after its remove is taken out by its first firing, which makes no campaign", async () => {
	const { path } = writeRecipientsCsv(2, { seed: 61 });
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: path,
		cron: '0 0 1 1 *',
	});
	if (created.kind !== 'schedule') throw new Error('expected a schedule');
	const id = created.schedule.id;
	await removeCampaignSchedule(runner.context, id);
	await CAMPAIGN_CRON.upsert(runner.context, id, EVERY_SECOND);
	await expectTakenOut(runner.context.queues.control, `cron-${id}`);
	expect((await listCampaigns(runner.context)).filter((campaign) => campaign.id.startsWith(`${id}r`))).toEqual([]);
});

test("a reindex schedule's scheduler put back after its remove is taken out by its first firing, which makes no run", async () => {
	const earlier = new Set((await listReindexRuns(runner.context)).map((run) => run.id));
	const created = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source: writeFeed(feedText(products(range(0, 3)), 'ndjson'), 'orphan.ndjson'),
		idField: 'sku',
		cron: '0 0 1 1 *',
	});
	if (created.kind !== 'schedule') throw new Error('expected a schedule');
	const id = created.schedule.id;
	await removeReindexSchedule(runner.context, id);
	await REINDEX_CRON.upsert(runner.context, id, EVERY_SECOND);
	await expectTakenOut(runner.context.queues.shared('reindex'), `reindex-${id}`);
	expect((await listReindexRuns(runner.context)).filter((run) => !earlier.has(run.id))).toEqual([]);
});
