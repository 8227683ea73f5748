// @serial: measures pause and cancel within 1 s, --at and cron firings at their second on the wall clock, and SIGTERMs a lone runner
/**
 * Guarantees 5 and 6 and the schedules, measured in wall time: pause holds within 1 s on every
 * process, resume goes on, cancel ends pending recipients within 1 s; `--at` and a cron schedule
 * in a time zone fire at their time through BullMQ (each firing re-reads its source); a paused
 * schedule fires nothing at its times, a runner restart included, and fires again once resumed; SIGTERM
 * leaves nothing claimed. Every send is counted in the sandbox's own log. What measures no time (a
 * campaign pausing itself, refused schedules, the feeder's bounded window, crashes cut short):
 * control-feeder.test.ts.
 */
import { writeFileSync } from 'node:fs';

import {
	campaignStatus,
	cancel,
	createCampaign,
	listCampaigns,
	listSchedules,
	pauseCampaign,
	removeCampaignSchedule,
	resumeCampaign,
} from '../../runner/src/core/campaigns';
import {
	positionalTemplate,
	report,
	runCli,
	sendsByPhone,
	setFault,
	clearFaults,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';
import { controlKit } from './controlSupport';

jest.setTimeout(180_000);

const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '10', RUNNER_PAUSE_AFTER_FAILURES: '5' });

beforeAll(() => {
	// Two processes: a pause must hold on both.
	runner.spawnWorker();
	runner.spawnWorker();
});
afterEach(async () => {
	await clearFaults(runner.sandbox);
});

const { sendsTo, create, stateIs } = controlKit(runner);

test('pause stops every send of the campaign within 1 s; resume completes it without a duplicate', async () => {
	await setFault(runner.sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs: 30 });
	const { path, phones } = writeRecipientsCsv(600, { seed: 10 });
	// At 200/s: the 500 or so left after the pause take under 3 s once resumed, and more are in flight at the pause.
	const campaign = await create(path, { rate: 200 });
	await waitFor('100 sends', async () => (await sendsTo(phones)).length >= 100, 60_000, 50);
	await pauseCampaign(runner.context, campaign.id);
	const pausedAt = Date.now();
	await new Promise((resolve) => setTimeout(resolve, 3000));
	const afterPause = (await sendsTo(phones)).filter((message) => Date.parse(message.createdAt) > pausedAt + 1000);
	expect(afterPause).toEqual([]);
	const paused = await campaignStatus(runner.context, campaign.id);
	expect(paused.state).toBe('paused');
	expect(paused.counts.pending).toBeGreaterThan(0);

	await resumeCampaign(runner.context, campaign.id);
	await waitFor('the resumed campaign to complete', stateIs(campaign.id, 'completed'), 90_000);
	const sends = await sendsTo(phones);
	expect(sends).toHaveLength(600);
	expect(sendsByPhone(sends).size).toBe(600);
});

test('cancel marks every pending recipient cancelled and sends no more', async () => {
	const { path, phones } = writeRecipientsCsv(600, { seed: 11 });
	const campaign = await create(path, { rate: 50 });
	await waitFor('50 sends', async () => (await sendsTo(phones)).length >= 50, 60_000, 50);
	const result = await cancel(runner.context, campaign.id);
	const cancelledAt = Date.now();
	await new Promise((resolve) => setTimeout(resolve, 2500));
	const sends = await sendsTo(phones);
	expect(sends.filter((message) => Date.parse(message.createdAt) > cancelledAt + 1000)).toEqual([]);
	const status = await campaignStatus(runner.context, campaign.id);
	expect(status.state).toBe('cancelled');
	expect(status.counts.cancelled).toBe(result.cancelled);
	expect(status.counts.cancelled).toBeGreaterThan(300);
	expect(status.counts.sent).toBe(sends.length);
	expect(status.counts.sent + status.counts.cancelled).toBe(600);
});

test('--at starts the campaign at its time, not before', async () => {
	const { path, phones } = writeRecipientsCsv(20, { seed: 13 });
	const at = Date.now() + 4000;
	const campaign = await create(path, { at: new Date(at).toISOString() });
	expect(campaign.state).toBe('scheduled');
	await waitFor('the scheduled campaign to complete', stateIs(campaign.id, 'completed'), 60_000);
	const sends = await sendsTo(phones);
	expect(sends).toHaveLength(20);
	expect(Math.min(...sends.map((message) => Date.parse(message.createdAt)))).toBeGreaterThanOrEqual(at);
});

/** Hour, minute and second of `at` in `timeZone`. */
function wallClock(timeZone: string, at: Date): { hour: number; minute: number; second: number } {
	const parts = Object.fromEntries(
		new Intl.DateTimeFormat('en-GB', {
			timeZone,
			hour: 'numeric',
			minute: 'numeric',
			second: 'numeric',
			hourCycle: 'h23',
		})
			.formatToParts(at)
			.map((p) => [p.type, Number(p.value)]),
	);
	return { hour: parts.hour, minute: parts.minute, second: parts.second };
}

test('a cron schedule fires at its time in its time zone and re-reads its source at each run', async () => {
	// Kathmandu is UTC+5:45: a pattern read in UTC (or the machine's zone) would name another hour and minute.
	const timeZone = 'Asia/Kathmandu';
	// Two runs at whole seconds the pattern names, 3 to 4 s from now and 6 s after that: room for the
	// create before the first, and for the source's rewrite between them. A pattern is every
	// combination of its fields: where the two fall in different minutes or hours, the other
	// combinations lie in the past or 50 s and more ahead, after the schedule is cancelled.
	const at1 = (Math.floor(Date.now() / 1000) + 4) * 1000;
	const at2 = at1 + 6000;
	const [one, two] = [wallClock(timeZone, new Date(at1)), wallClock(timeZone, new Date(at2))];
	const both = (field: 'hour' | 'minute' | 'second') => [...new Set([one[field], two[field]])].join(',');
	const first = writeRecipientsCsv(3, { seed: 14 });
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: first.path,
		cron: `${both('second')} ${both('minute')} ${both('hour')} * * *`,
		tz: timeZone,
	});
	if (created.kind !== 'schedule') throw new Error('expected a schedule');
	const runs = async () => (await listCampaigns(runner.context)).filter((c) => c.id.startsWith(created.schedule.id));
	const [run1] = await waitFor(
		'the first firing',
		async () => ((await runs()).length >= 1 ? runs() : undefined),
		30_000,
		100,
	);
	// The source changes between runs (a run is listed once it has read its source): the next run sends to the new list.
	const second = writeRecipientsCsv(4, { seed: 15 });
	writeFileSync(first.path, `phone,1,2\n${second.phones.map((phone) => `+${phone},New,order`).join('\n')}\n`);
	await waitFor('the first run to complete', stateIs(run1.id, 'completed'), 30_000);
	const run2 = await waitFor('a second firing', async () => (await runs()).find((c) => c.id !== run1.id), 30_000);
	await waitFor('the second run to complete', stateIs(run2.id, 'completed'), 30_000);
	await cancel(runner.context, created.schedule.id);

	expect((await report(runner.context, run1.id)).map((row) => row.phone)).toEqual(first.phones);
	expect((await report(runner.context, run2.id)).map((row) => row.phone)).toEqual(second.phones);
	const firstSends = await sendsTo(first.phones);
	expect(firstSends).toHaveLength(3);
	// Each run fired at its second in the zone's hour and minute the pattern names, within a few
	// seconds: its first message at the sandbox.
	const firedAt = async (phones: string[]) =>
		Math.min(...(await sendsTo(phones)).map((message) => Date.parse(message.createdAt)));
	for (const late of [(await firedAt(first.phones)) - at1, (await firedAt(second.phones)) - at2]) {
		expect(late).toBeGreaterThanOrEqual(0);
		expect(late).toBeLessThan(4000);
	}
});

/** How long a paused every-second schedule is watched: four of its times pass, a runner restart among them. */
const PAUSED_FOR_MS = 4000;

test('a paused cron schedule fires nothing at its times, across a runner restart, and fires again once resumed', async () => {
	const { path } = writeRecipientsCsv(2, { seed: 17 });
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: path,
		cron: '* * * * * *',
	});
	if (created.kind !== 'schedule') throw new Error('expected a schedule');
	const id = created.schedule.id;
	// Each firing's campaign id is the schedule's, "r", and the time it was due (base 36).
	const dueTimes = async () =>
		(await listCampaigns(runner.context))
			.filter((campaign) => campaign.id.startsWith(`${id}r`))
			.map((campaign) => parseInt(campaign.id.slice(id.length + 1), 36));
	await waitFor('a first firing', async () => ((await dueTimes()).length > 0 ? true : undefined), 30_000, 100);

	// Paused through the CLI, which takes a schedule's id as `campaign cancel` does.
	const paused = await runCli(['campaign', 'pause', id], runner.env);
	const pausedAt = Date.now();
	expect(paused.stdout.trim()).toBe(`schedule ${id}: paused`);
	const [listed] = await listSchedules(runner.context);
	expect(listed).toMatchObject({ id, state: 'paused', next_run_at: null, paused_at: expect.any(String) });
	expect(Date.parse(listed.paused_at ?? '')).toBeGreaterThan(pausedAt - 30_000);
	expect(listed.run_count).toBeGreaterThan(0);
	// Every runner process stops and a new one starts: the pause is in Redis, not in a process.
	await Promise.all(runner.processes.map((worker) => worker.kill('SIGTERM')));
	runner.spawnWorker();
	await new Promise((resolve) => setTimeout(resolve, PAUSED_FOR_MS));
	expect((await dueTimes()).filter((due) => due > pausedAt)).toEqual([]);

	const resumeAsked = Date.now();
	const resumed = await runCli(['campaign', 'resume', id, '--json'], runner.env);
	const resumedAt = Date.now();
	const answer = JSON.parse(resumed.stdout) as { state: string; schedule: boolean; next_run_at: string };
	expect(answer).toMatchObject({ id, state: 'active', schedule: true });
	expect(Date.parse(answer.next_run_at)).toBeGreaterThan(pausedAt);
	expect(Date.parse(answer.next_run_at)).toBeLessThanOrEqual(resumedAt + 1000);
	await waitFor(
		'a firing after the resume',
		async () => ((await dueTimes()).some((due) => due > resumedAt) ? true : undefined),
		30_000,
		100,
	);
	await removeCampaignSchedule(runner.context, id);
	// Nothing due while it was paused fired later: the resume went on from its next time, making up none it missed.
	expect((await dueTimes()).filter((due) => due > pausedAt && due < resumeAsked)).toEqual([]);
});

test('SIGTERM lets in-flight sends finish and leaves nothing claimed', async () => {
	await setFault(runner.sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs: 400 });
	const lonely = runner.spawnWorker({ RUNNER_PREFIX: `${runner.env.RUNNER_PREFIX}s` });
	const { path, phones } = writeRecipientsCsv(200, { seed: 16 });
	// A context on the lonely worker's own prefix, so only that process sends this campaign.
	const { openContext } = await import('../../runner/src/runtime');
	const { loadConfig } = await import('../../runner/src/config');
	const { createLogger } = await import('../../runner/src/log');
	const context = await openContext(
		loadConfig({ ...runner.env, RUNNER_PREFIX: `${runner.env.RUNNER_PREFIX}s` }),
		createLogger('silent'),
		{ withService: true },
	);
	try {
		const created = await createCampaign(context, {
			templateId: positionalTemplate(runner.business).id,
			from: runner.business.phoneNumbers[0],
			source: path,
			rate: 100,
		});
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		await waitFor(
			'sends in flight',
			async () => ((await campaignStatus(context, created.id)).counts.claimed > 0 ? true : undefined),
			30_000,
			20,
		);
		const code = await lonely.kill('SIGTERM');
		expect(code).toBe(0);
		const status = await campaignStatus(context, created.id);
		expect(status.counts.claimed).toBe(0);
		expect(status.counts.unknown).toBe(0);
		const sends = await sendsTo(phones);
		expect(status.counts.sent).toBe(sends.length);
		expect(lonely.output()).toMatch(/runner stopped.*"clean":true|"clean":true.*runner stopped/);
	} finally {
		await (await import('../../runner/src/runtime')).closeContext(context);
	}
});
