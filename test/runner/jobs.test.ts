/**
 * The job registry (runner/src/jobs.ts) against a real worker process: every queue it lists has a
 * worker, every job name a runner queues reaches a processor, a name no kind has is refused, and
 * the producers give jobs the ids and options that jobs already in Redis carry. The names, ids and
 * options are written out here, not read from the registry: delayed jobs and job schedulers outlive
 * an upgrade, so a kind renamed or dropped from the registry would leave them unworked, and an id
 * formed otherwise would no longer dedupe against one queued before.
 */
import type { Job, Queue } from 'bullmq';
import type { RunnerEvent, RunnerEventType } from 'convo-contract';

import { runnerQueues } from '../../runner/src/core/runners';
import {
	addDeliveryJobs,
	addReindexRunJob,
	addSendJobs,
	addStartJob,
	CAMPAIGN_CRON,
	REINDEX_CRON,
} from '../../runner/src/jobs';
import { useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(120_000);

const runner = useRunnerUnderTest({ RUNNER_WEBHOOK_KEY: 'a webhook key of the jobs test' });
/** A number no campaign uses: its send queue has jobs of campaigns that do not exist. */
const NUMBER = '4930999000111';
/** The worker process the tests after the first use (the first checks jobs as queued, before any worker takes them). */
let worker: ReturnType<typeof runner.spawnWorker> | undefined;
async function startWorker(): Promise<void> {
	if (worker) return;
	await runner.context.redis.sadd(runner.context.keys.numbers, NUMBER);
	worker = runner.spawnWorker();
}

const event = (id: string, type: RunnerEventType): RunnerEvent => ({
	id,
	type,
	created_at: new Date().toISOString(),
	data: {},
});

/** Waits until the job has ended; its state, its reason when it failed, and how many attempts it made. */
async function ending(
	queue: Queue,
	job: Job,
): Promise<{ queue: string; name: string; state: string; reason?: string; attempts: number }> {
	const id = String(job.id);
	const state = await waitFor(
		`${queue.name} job "${job.name}" to end`,
		async () => {
			const now = await queue.getJobState(id);
			return now === 'completed' || now === 'failed' ? now : undefined;
		},
		30_000,
		100,
	);
	const ended = await queue.getJob(id);
	return {
		queue: queue.name,
		name: job.name,
		state,
		reason: ended?.failedReason || undefined,
		attempts: ended?.attemptsMade ?? -1,
	};
}

test('the producers form the ids and options of jobs already queued', async () => {
	const { context } = runner;
	const { queues, config } = context;
	// No worker runs yet: the jobs stay as the producers queued them.
	await addStartJob(context, { campaign: 'c1', dueAt: Date.now() + 3_600_000 });
	await addStartJob(context, { campaign: 'c2', dueAt: Date.now() - 60_000 }, { afterCommit: true });
	await addSendJobs(context, NUMBER, [{ campaign: 'c3', index: 7 }]);
	await addReindexRunJob(context, { run: 'r1' });
	await addDeliveryJobs(context, [{ event: event('e1', 'campaign.paused'), webhook: 'w1' }]);

	const start = await queues.control.getJob('start-c1');
	expect(start).toMatchObject({
		name: 'start',
		data: { campaign: 'c1' },
		opts: { removeOnComplete: true, removeOnFail: 50 },
	});
	expect(start?.opts.delay).toBeGreaterThan(3_500_000);
	// Queued before its campaign's commit: 2 s of grace, then 10 tries 2 s doubling.
	expect(await queues.control.getJob('start-c2')).toMatchObject({
		opts: { delay: 2000, attempts: 10, backoff: { type: 'commitWait' }, removeOnComplete: true, removeOnFail: 50 },
	});
	expect(await queues.send(NUMBER).getJob('c3-7')).toMatchObject({
		name: 'send',
		data: { campaign: 'c3', index: 7 },
		opts: {
			attempts: config.RUNNER_SEND_ATTEMPTS,
			backoff: { type: 'send' },
			removeOnComplete: true,
			removeOnFail: true,
		},
	});
	expect(await queues.reindex.getJob('run-r1')).toMatchObject({
		name: 'run',
		data: { run: 'r1' },
		opts: { removeOnComplete: true, removeOnFail: 100 },
	});
	expect(await queues.events.getJob('e1-w1')).toMatchObject({
		name: 'campaign.paused',
		data: { webhook: 'w1', event: { id: 'e1' } },
		opts: {
			attempts: config.RUNNER_WEBHOOK_ATTEMPTS,
			backoff: { type: 'delivery' },
			removeOnComplete: { age: 3600, count: 10_000 },
			removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
		},
	});

	await CAMPAIGN_CRON.upsert(context, 's1', { pattern: '0 9 * * 1', tz: 'Europe/Berlin' });
	await REINDEX_CRON.upsert(context, 's2', { pattern: '0 3 * * *', tz: 'UTC' });
	expect(await queues.control.getJobScheduler('cron-s1')).toMatchObject({
		name: 'cron',
		pattern: '0 9 * * 1',
		tz: 'Europe/Berlin',
		template: { data: { schedule: 's1' } },
	});
	expect(await queues.reindex.getJobScheduler('reindex-s2')).toMatchObject({
		name: 'scheduled',
		pattern: '0 3 * * *',
		tz: 'UTC',
		template: { data: { schedule: 's2' } },
	});
	await CAMPAIGN_CRON.remove(context, 's1');
	await REINDEX_CRON.remove(context, 's2');
	expect(await queues.control.getJobScheduler('cron-s1')).toBeUndefined();
	expect(await queues.reindex.getJobScheduler('reindex-s2')).toBeUndefined();
});

test('a started process works every queue of the registry, and every job name a runner queues', async () => {
	const { context } = runner;
	await startWorker();
	const listed = await runnerQueues(context);
	expect(listed.map((queue) => queue.name)).toEqual([
		'control-{g}',
		'reindex-{g}',
		'events-{g}',
		'tracking-{g}',
		`send-{n${NUMBER}}`,
	]);
	await waitFor(
		'a worker on every queue',
		async () => (await Promise.all(listed.map((queue) => queue.getWorkersCount()))).every((count) => count > 0),
		30_000,
	);
	expect(await context.queues.control.getJobScheduler('feeder')).toMatchObject({ name: 'feed', every: 1000 });
	expect(await context.queues.shared('tracking').getJobScheduler('tracker')).toMatchObject({
		name: 'track',
		every: 1000,
	});

	// Each names nothing that exists, so each processor ends at once without doing anything.
	const { control, reindex, events } = context.queues;
	const send = context.queues.send(NUMBER);
	const jobs: Array<[Queue, Job]> = [
		[control, await control.add('feed', {})],
		[control, await control.add('start', { campaign: 'none', dueAt: Date.now() })],
		[control, await control.add('cron', { schedule: 'none' })],
		[reindex, await reindex.add('run', { run: 'none' })],
		[reindex, await reindex.add('scheduled', { schedule: 'none' })],
		[send, await send.add('send', { campaign: 'none', index: 0 })],
		[context.queues.shared('tracking'), await context.queues.shared('tracking').add('track', {})],
		...(await Promise.all(
			(
				[
					'campaign.finished',
					'campaign.paused',
					'campaign.waiting',
					'campaign.delivery_settled',
					'campaign.variant_chosen',
					'reindex.finished',
				] as const
			).map(
				async (type): Promise<[Queue, Job]> => [
					events,
					await events.add(type, { event: event(`e-${type}`, type), webhook: 'none' }),
				],
			),
		)),
	];
	const ended = await Promise.all(jobs.map(([queue, job]) => ending(queue, job)));
	expect(ended.filter((job) => job.state !== 'completed')).toEqual([]);
});

/** The registry's kind of a queue by its name in Redis: `control-{g}` is control, `send-{n<number>}` is send. */
const kindOf = (queue: string) => (queue.startsWith('send-') ? 'send' : queue.replace('-{g}', ''));

test('a job whose name no kind has is refused at once, on every queue, and not tried again', async () => {
	await startWorker();
	const { control, reindex, events } = runner.context.queues;
	const queues = [
		control,
		reindex,
		events,
		runner.context.queues.shared('tracking'),
		runner.context.queues.send(NUMBER),
	];
	const jobs = await Promise.all(
		queues.map(
			async (queue): Promise<[Queue, Job]> => [
				queue,
				await queue.add('retired-kind', { campaign: 'none', index: 0 }, { attempts: 3 }),
			],
		),
	);
	const ended = await Promise.all(jobs.map(([queue, job]) => ending(queue, job)));
	for (const job of ended)
		expect(job).toEqual({
			queue: job.queue,
			name: 'retired-kind',
			state: 'failed',
			reason: `no processor for a "retired-kind" job on the ${kindOf(job.queue)} queue`,
			attempts: 1,
		});
});
