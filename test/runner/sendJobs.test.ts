/**
 * A send job holds SEND_JOB_SIZE recipients (runner/src/jobs.ts), sent one after another. Killed
 * mid-job (SIGKILL), the job leaves what it had sent sent, the one it had claimed `unknown` (never
 * resent), and the rest of the job pending; the same job, taken up again once BullMQ sees it
 * stalled, sends the rest. Counted in the sandbox's own log.
 */
import { campaignStatus, createCampaign } from '../../runner/src/core/campaigns';
import { SEND_JOB_SIZE } from '../../runner/src/jobs';
import {
	positionalTemplate,
	report,
	sendsByPhone,
	setFault,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(180_000);

// One job at a time: the job under test is the only one in flight.
// The killed process's send job is taken back once BullMQ sees it stalled: two job locks, shortened
// from the 15 s default.
const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '1', RUNNER_JOB_LOCK: '3s' });

test('a send job killed mid-way: sent recipients once, the claimed one unknown, the rest sent by the same job after a restart', async () => {
	// 300 ms per send: the kill lands while a recipient is claimed and in flight.
	await setFault(runner.sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs: 300 });
	const { path, phones } = writeRecipientsCsv(SEND_JOB_SIZE, { seed: 61 });
	const from = runner.business.phoneNumbers[0];
	const first = runner.spawnWorker({}, 'start');
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from,
		source: path,
		rate: 20,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');

	await waitFor(
		'4 sends of the job before the kill',
		async () => (await templateSends(runner.sandbox)).length >= 4,
		60_000,
		20,
	);
	// The whole campaign is one job, and it is the one being worked.
	const queue = runner.context.queues.send(from);
	const jobs = await queue.getJobs(['active', 'wait', 'delayed', 'prioritized']);
	expect(jobs.map((job) => ({ id: job.id, data: job.data }))).toEqual([
		{ id: `${created.id}-0`, data: { campaign: created.id, index: 0, count: SEND_JOB_SIZE } },
	]);
	expect(await queue.getJobCounts('active')).toEqual({ active: 1 });
	// Wait until a recipient is claimed (in flight) and kill then.
	await waitFor(
		'a claim in flight',
		async () => (await campaignStatus(runner.context, created.id)).counts.claimed === 1,
		10_000,
		5,
	);
	await first.kill('SIGKILL');
	const sentBeforeKill = new Set((await templateSends(runner.sandbox)).map((message) => message.to));
	const atKill = (await campaignStatus(runner.context, created.id)).counts;
	expect(atKill.claimed).toBe(1);
	expect(atKill.pending).toBeGreaterThan(0);

	runner.spawnWorker({}, 'start');
	const done = await waitFor(
		'the campaign to complete after the kill',
		async () => {
			const status = await campaignStatus(runner.context, created.id);
			return status.state === 'completed' ? status : undefined;
		},
		120_000,
	);
	// The claimed one became unknown (it may have been sent): never resent. Everything else sent once.
	expect(done.counts).toMatchObject({ unknown: 1, sent: SEND_JOB_SIZE - 1, pending: 0, claimed: 0 });
	const sends = await templateSends(runner.sandbox);
	const byPhone = sendsByPhone(sends);
	expect([...byPhone.values()].filter((list) => list.length > 1)).toEqual([]);
	const rows = await report(runner.context, created.id);
	const unknown = rows.filter((row) => row.outcome === 'unknown').map((row) => row.phone);
	for (const row of rows.filter((each) => each.outcome === 'sent'))
		expect(byPhone.get(row.phone)?.map((message) => message.uuid)).toEqual([row.message_id]);
	// Those sent before the kill were not sent again; those after it were sent by the restarted process.
	expect(sentBeforeKill.size).toBeGreaterThanOrEqual(4);
	for (const phone of phones) if (sentBeforeKill.has(phone)) expect(byPhone.get(phone)).toHaveLength(1);
	expect(unknown).toHaveLength(1);
	expect(sends.length).toBeGreaterThanOrEqual(SEND_JOB_SIZE - 1);
	expect(sends.length).toBeLessThanOrEqual(SEND_JOB_SIZE);
});
