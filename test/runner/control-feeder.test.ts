/**
 * Control of campaigns that measures no time, against runner processes and the sandbox: a campaign
 * pauses itself after N failures in a row; a schedule BullMQ refuses is named as the client names
 * it; Redis holds a bounded window of send jobs however large the campaign; a cancel or a create
 * that a crash cut short is finished by the next feeder tick. Every send is counted in the
 * sandbox's own log. What is measured in wall time (pause, cancel, `--at`, cron, SIGTERM):
 * control.test.ts.
 */
import { writeFileSync } from 'node:fs';

import { API_NAMES, campaignStatus, cancel, createCampaign, listCampaigns } from '../../runner/src/core/campaigns';
import { SEND_JOB_SIZE } from '../../runner/src/jobs';
import { positionalTemplate, useRunnerUnderTest, waitFor, writeRecipientsCsv } from './support';
import { controlKit } from './controlSupport';

jest.setTimeout(120_000);

const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '10', RUNNER_PAUSE_AFTER_FAILURES: '5' });

beforeAll(() => {
	runner.spawnWorker();
});

const { sendsTo, create, stateIs } = controlKit(runner);

test('a campaign pauses itself after 5 failed recipients in a row and says why', async () => {
	// No value for variable "2": the service refuses each send with 400.
	const lines = ['phone,1', ...Array.from({ length: 40 }, (_, i) => `+4917112${String(i).padStart(5, '0')},Ana`)];
	const path = writeRecipientsCsv(0, { seed: 12 }).path;
	writeFileSync(path, `${lines.join('\n')}\n`);
	const campaign = await create(path);
	await waitFor('the campaign to pause itself', stateIs(campaign.id, 'paused'), 60_000);
	const status = await campaignStatus(runner.context, campaign.id);
	expect(status.last_error).toMatch(/paused itself after \d+ failed recipients in a row.*400/);
	expect(status.counts.failed).toBeGreaterThanOrEqual(5);
	// Sends in flight when the fifth failure landed may settle too, but far from all 40 were tried.
	expect(status.counts.failed).toBeLessThan(30);
	expect(status.counts.pending).toBeGreaterThan(10);
});

test('a cron pattern or time zone BullMQ refuses is named as the client names it, and takes no schedule place', async () => {
	const settings = {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: writeRecipientsCsv(1, { seed: 16 }).path,
	};
	await expect(createCampaign(runner.context, { ...settings, cron: 'not a cron' })).rejects.toThrow(
		'--cron "not a cron" with --tz "UTC" is not a valid schedule',
	);
	await expect(
		createCampaign(runner.context, { ...settings, cron: '0 * * * *', tz: 'Mars/Olympus' }, undefined, API_NAMES),
	).rejects.toThrow('cron "0 * * * *" with tz "Mars/Olympus" is not a valid schedule');
	await expect(createCampaign(runner.context, { ...settings, tz: 'UTC' }, undefined, API_NAMES)).rejects.toMatchObject({
		message: 'tz goes with cron',
		field: 'tz',
	});
	expect(await runner.context.redis.zcard(runner.context.keys.schedules)).toBe(0);
});

test('Redis holds a bounded window of send jobs however large the campaign', async () => {
	const { path } = writeRecipientsCsv(20_000, { seed: 17 });
	const campaign = await create(path, { rate: 10 });
	const queue = runner.context.queues.send(runner.business.phoneNumbers[0]);
	// Recipients in queued jobs: a job holds up to SEND_JOB_SIZE of them.
	let most = 0;
	let mostJobs = 0;
	for (let tick = 0; tick < 8; tick++) {
		await new Promise((resolve) => setTimeout(resolve, 500));
		const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized']);
		mostJobs = Math.max(mostJobs, jobs.length);
		most = Math.max(
			most,
			jobs.reduce((sum, job) => sum + (job.data.count ?? 1), 0),
		);
	}
	const status = await campaignStatus(runner.context, campaign.id);
	await cancel(runner.context, campaign.id);
	// 20 s of sends at 10/s is the window (at least 200 recipients): the feeder fed it, and no more.
	expect(most).toBeGreaterThanOrEqual(150);
	expect(most).toBeLessThanOrEqual(200 + 20);
	expect(mostJobs).toBeLessThanOrEqual(Math.ceil((200 + 20) / SEND_JOB_SIZE));
	expect(status.counts.pending).toBeGreaterThan(19_000);
});

test('a cancel cut short by a crash is finished by the next feeder tick: nothing stays pending', async () => {
	const { path, phones } = writeRecipientsCsv(50, { seed: 18 });
	const campaign = await create(path, { at: new Date(Date.now() + 3_600_000).toISOString() });
	// What a process killed right after the state change leaves: cancelled, in `finishing`, recipients still pending.
	const from = runner.business.phoneNumbers[0];
	await runner.context.redis.sadd(runner.context.keys.finishing(from), campaign.id);
	await runner.context.redis.hset(runner.context.keys.campaign(from, campaign.id), {
		state: 'cancelled',
		last_error: 'cancelled by the operator',
	});
	expect((await campaignStatus(runner.context, campaign.id)).counts.pending).toBe(50);
	const status = await waitFor(
		'the pending recipients to be cancelled',
		async () => {
			const current = await campaignStatus(runner.context, campaign.id);
			return current.counts.pending === 0 ? current : undefined;
		},
		20_000,
	);
	expect(status.counts.cancelled).toBe(50);
	expect(await runner.context.redis.sismember(runner.context.keys.finishing(from), campaign.id)).toBe(0);
	expect(await sendsTo(phones)).toEqual([]);
});

test('a create cut short between its commit and its listing is listed by the next feeder tick', async () => {
	const { path } = writeRecipientsCsv(5, { seed: 19 });
	const campaign = await create(path, { at: new Date(Date.now() + 3_600_000).toISOString() });
	// What a process killed right after the commit leaves (runner/src/keyGroups.ts): the campaign, not in the list, in its number's `unlisted`.
	const from = runner.business.phoneNumbers[0];
	const { redis, keys } = runner.context;
	const createdAt = Number(await redis.zscore(keys.campaigns, campaign.id));
	await redis.zrem(keys.campaigns, campaign.id);
	await redis.zadd(keys.unlisted(from), createdAt, campaign.id);
	const listed = async () =>
		(await listCampaigns(runner.context)).some((listedCampaign) => listedCampaign.id === campaign.id);
	expect(await listed()).toBe(false);
	await waitFor('the campaign to be listed again', async () => (await listed()) || undefined, 20_000);
	expect(Number(await redis.zscore(keys.campaigns, campaign.id))).toBe(createdAt);
	expect(await redis.zscore(keys.unlisted(from), campaign.id)).toBeNull();
	await cancel(runner.context, campaign.id);
});
