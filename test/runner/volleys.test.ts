// @serial: measures the send rate in every sliding second
/**
 * A send job takes its starts in volleys at a high rate (RUNNER_SEND_VOLLEY: the rate's starts in
 * that time, 10 at 1,000/s by default): one call claims the volley, its sends go out at once, one
 * call settles it. Here the span is set long so that low rates send in volleys too (five at 20/s and at
 * 50/s), and each guarantee is counted in the sandbox's log: a volley in flight when its process is
 * SIGKILLed is never resent, and two processes sending in volleys keep the number's rate.
 */
import { campaignStatus, createCampaign } from '../../runner/src/core/campaigns';
import { SEND_JOB_SIZE } from '../../runner/src/jobs';
import { volleySize } from '../../runner/src/sending/startGateMath';
import {
	busiestSpan,
	clearFaults,
	dumpKeys,
	expectBusiestAtMost,
	expectNoSecret,
	positionalTemplate,
	report,
	sendsByPhone,
	setFault,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
	type SandboxMessage,
} from './support';

jest.setTimeout(180_000);

// The killed process's send job is taken back once BullMQ sees it stalled: two job locks, shortened.
const runner = useRunnerUnderTest({ RUNNER_JOB_LOCK: '3s' });

/** When the service recorded each send. */
const arrivals = (messages: SandboxMessage[]) => messages.map((message) => Date.parse(message.createdAt));

/** The recipients of one claim call share their first attempt's time: how many calls claimed them, at most. */
const claimTimes = async (campaign: string) =>
	new Set((await report(runner.context, campaign)).map((row) => row.first_attempt_at)).size;

/** How long the sandbox holds the volley the first test kills in flight: ten times its 300 ms answer. */
const VOLLEY_HELD_MS = 3000;

/** Send requests the sandbox has received, answered or not (counted as each arrives). */
const sendRequests = async () =>
	((await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`)).json()) as { counts: Record<string, number> })
		.counts['POST /api/external/v2/send-template'] ?? 0;

afterEach(async () => {
	// Each test's processes only: the next test counts its own.
	await Promise.all(runner.processes.splice(0).map((process) => process.kill('SIGKILL')));
});

test('a volley in flight when its process is killed becomes unknown, never resent; the rest of the job is sent once', async () => {
	// 250 ms at 20/s: volleys of five, one job at a time, each send out 300 ms.
	const worker = { RUNNER_SEND_VOLLEY: '250ms', RUNNER_CONCURRENCY: '1' };
	expect(volleySize(20, 250)).toBe(5);
	const sendLatency = (latencyMs: number) =>
		setFault(runner.sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs });
	await sendLatency(300);
	const { path, phones } = writeRecipientsCsv(SEND_JOB_SIZE, { seed: 62 });
	const first = runner.spawnWorker(worker, 'start');
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: path,
		rate: 20,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	const mine = async () => (await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to));
	await waitFor('two volleys sent before the kill', async () => (await mine()).length >= 10, 60_000, 20);
	// The next volley is held at the sandbox until the kill has landed: a kill that came a moment
	// after a 300 ms answer (a loaded machine's test process reads the claim late) found none in flight.
	await sendLatency(VOLLEY_HELD_MS);
	const arrivedBefore = await sendRequests();
	await waitFor(
		'a volley held at the sandbox',
		async () =>
			(await sendRequests()) - arrivedBefore >= 5 &&
			(await campaignStatus(runner.context, created.id)).counts.claimed === 5,
		30_000,
		5,
	);
	await first.kill('SIGKILL');
	await sendLatency(300);
	const sentBeforeKill = new Set((await mine()).map((message) => message.to));

	runner.spawnWorker(worker, 'start');
	const done = await waitFor(
		'the campaign to complete after the kill',
		async () => {
			const status = await campaignStatus(runner.context, created.id);
			return status.state === 'completed' ? status : undefined;
		},
		120_000,
	);
	// The whole volley in flight became unknown (each may have been sent): never resent.
	expect(done.counts).toMatchObject({ unknown: 5, sent: SEND_JOB_SIZE - 5, pending: 0, claimed: 0 });
	// The held volley's sends are in the sandbox's log once their hold is over: then a resend would show.
	await waitFor(
		'every send request the sandbox received to be in its log',
		async () => (await sendRequests()) === (await templateSends(runner.sandbox)).length,
		VOLLEY_HELD_MS + 10_000,
		50,
	);
	const byPhone = sendsByPhone(await mine());
	expect([...byPhone.values()].filter((list) => list.length > 1)).toEqual([]);
	const rows = await report(runner.context, created.id);
	for (const row of rows.filter((each) => each.outcome === 'sent'))
		expect(byPhone.get(row.phone)?.map((message) => message.uuid)).toEqual([row.message_id]);
	for (const phone of sentBeforeKill) expect(byPhone.get(phone)).toHaveLength(1);
	// Ten volleys of five, one claim call each.
	expect(await claimTimes(created.id)).toBeLessThanOrEqual(SEND_JOB_SIZE / 5);
});

test('two processes sending in volleys of five keep the shared 50/s', async () => {
	await clearFaults(runner.sandbox);
	// Volleys of 100 ms of the rate, with the room raised to match, as the volleys' decision record
	// asks: a volley's sends move together, and a room shorter than a volley leaves no margin for
	// them on the way.
	const worker = { RUNNER_SEND_VOLLEY: '100ms', RUNNER_RATE_ROOM: '100ms', RUNNER_CONCURRENCY: '20' };
	expect(volleySize(50, 100)).toBe(5);
	runner.spawnWorker(worker);
	runner.spawnWorker(worker);
	const { path, phones } = writeRecipientsCsv(500, { seed: 63 });
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[1],
		source: path,
		rate: 50,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	await waitFor(
		'the campaign to complete',
		async () => (await campaignStatus(runner.context, created.id)).state === 'completed',
		120_000,
	);
	const sends = (await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to));
	expect(sends).toHaveLength(500);
	expect([...sendsByPhone(sends).values()].filter((list) => list.length > 1)).toEqual([]);
	// The tolerance of rate.test.ts (10% + 2); the strict count by arrival is benchmark 14's.
	expectBusiestAtMost(arrivals(sends), Math.floor(50 * 1.1) + 2);
	expect(busiestSpan(arrivals(sends)).count).toBeGreaterThan(25);
	// A hundred volleys of five (a job's last volley, at a wait, may be fewer).
	expect(await claimTimes(created.id)).toBeLessThanOrEqual(500 / 5 + 20);
	// What the volleys left in Redis and the workers' logs holds no secret of the business, and the logs no phone.
	const logs = runner.processes.map((process) => process.output()).join('\n');
	expectNoSecret(runner.business, {
		redis: await dumpKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string),
		logs,
	});
	expect(phones.filter((phone) => logs.includes(phone))).toEqual([]);
});
