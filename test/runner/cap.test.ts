// @serial: SIGKILLs a worker mid-campaign, and measures the frequency cap's window in wall time
/**
 * One frequency cap across campaigns (#23), with runner processes, a real Redis and the sandbox,
 * counted in the sandbox's own log: what holds across a killed process, and what is measured in
 * wall time (a recipient waiting out the window, the cap's state expiring). The business default
 * here is 1 per 24 h (RUNNER_FREQUENCY_CAP) on the first number; the second number has policies of
 * its own, short ones (seconds), so waiting and expiry are seen within a test. How campaigns count
 * against the cap (dry runs, transactional campaigns, counts given back) and how it is set (CLI,
 * API): cap-counts.test.ts, which measures no time.
 */

import { campaignStatus, cancel, createCampaign, listCampaigns } from '../../runner/src/core/campaigns';
import { clearCap, setCap } from '../../runner/src/core/audience';
import {
	positionalTemplate,
	report,
	sendsByPhone,
	setFault,
	clearFaults,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
	type SandboxMessage,
} from './support';
import { capKit } from './capSupport';

jest.setTimeout(420_000);

// Job lock and feeder watch shortened from 15 s: the killed process's jobs come back sooner.
const runner = useRunnerUnderTest({
	RUNNER_FREQUENCY_CAP: '1/24h',
	RUNNER_CONCURRENCY: '10',
	RUNNER_JOB_LOCK: '3s',
	RUNNER_FEEDER_STALL: '3s',
});
const SEND = 'POST /api/external/v2/send-template';

// One process from the start; the last test adds a second and kills it.
beforeAll(() => runner.spawnWorker());

const { csvOf, finished, create } = capKit(runner);

const sendsTo = async (phones: string[]): Promise<SandboxMessage[]> => {
	const wanted = new Set(phones);
	return (await templateSends(runner.sandbox)).filter((message) => wanted.has(message.to));
};

test('a recipient over the cap waits when its campaign says so, and is sent once allowed; one that does not is capped with the time', async () => {
	const from = runner.business.phoneNumbers[1];
	await setCap(runner.context, from, '1/8s');
	const phones = writeRecipientsCsv(5, { seed: 32 }).phones;
	const first = await create(csvOf(phones), from);
	await waitFor('the first campaign to finish', finished(first.id), 60_000);
	const waiting = await create(csvOf(phones), from, { whenCapped: 'wait' });
	const skipping = await create(csvOf(phones), from);
	const skipped = await waitFor('the skipping campaign to finish', finished(skipping.id), 60_000);
	expect(skipped.counts).toMatchObject({ capped: 5, sent: 0 });
	expect((await campaignStatus(runner.context, waiting.id)).state).toBe('running');

	const done = await waitFor('the waiting campaign to finish', finished(waiting.id), 60_000);
	expect(done.counts).toMatchObject({ sent: 5, capped: 0 });
	const byPhone = sendsByPhone(await sendsTo(phones));
	const rows = await report(runner.context, skipping.id);
	for (const phone of phones) {
		const [one, two] = (byPhone.get(phone) ?? []).map((message) => Date.parse(message.createdAt));
		expect({ phone, sends: byPhone.get(phone)?.length }).toEqual({ phone, sends: 2 });
		// By the sandbox's clock: not before the 8 s window after the first send (the clocks are one machine's).
		expect(two - one).toBeGreaterThanOrEqual(8000 - 50);
		const allowed = Date.parse(
			/next allowed (\S+)$/.exec(rows.find((row) => row.phone === phone)?.error ?? '')?.[1] ?? '',
		);
		expect(allowed - one).toBeGreaterThanOrEqual(8000 - 1000);
		expect(allowed - one).toBeLessThanOrEqual(8000 + 2000);
	}
	await clearCap(runner.context, from);
});

test("the cap's state per phone expires after the longest window, and holds no more times than the largest count", async () => {
	const from = runner.business.phoneNumbers[1];
	await setCap(runner.context, from, '1/2s');
	const [phone] = writeRecipientsCsv(1, { seed: 34 }).phones;
	const key = runner.context.keys.capSends(from, phone);
	const sendOnce = async () => {
		const created = await create(csvOf([phone]), from);
		expect((await waitFor('the send', finished(created.id), 60_000)).counts).toMatchObject({ sent: 1, capped: 0 });
	};
	await sendOnce();
	const ttl = await runner.context.redis.pttl(key);
	expect(ttl).toBeGreaterThan(0);
	expect(ttl).toBeLessThanOrEqual(2000);
	await waitFor('the state to expire', async () => (await runner.context.redis.exists(key)) === 0, 5000, 100);

	// Three sends, each once the policy allows it: the key keeps the last two (the largest count).
	await setCap(runner.context, from, '1/2s,2/6s');
	const times = async () => ((await runner.context.redis.get(key)) ?? '').split(',').filter(Boolean).map(Number);
	const untilAllowed = async (at: number) =>
		new Promise((resolve) => setTimeout(resolve, Math.max(0, at + 100 - Date.now())));
	await sendOnce();
	await untilAllowed((await times())[0] + 2000);
	await sendOnce();
	await untilAllowed((await times())[0] + 6000);
	await sendOnce();
	const kept = await times();
	expect(kept).toHaveLength(2);
	expect(kept[1] - kept[0]).toBeLessThan(6000);
	expect(await runner.context.redis.pttl(key)).toBeLessThanOrEqual(6000);
	await clearCap(runner.context, from);
});

// Last: a process killed mid-tick may hold the feeder's lock until it lapses (30 s), which would
// only slow a later test that waits for the feeder.
test("two campaigns and a schedule's firings to overlapping audiences under 1 per 24 h, two processes, one killed mid-run: no phone receives two", async () => {
	const from = runner.business.phoneNumbers[0];
	// Sends in flight at the kill: a claim the dead process held may have sent, so it keeps its count (unknown).
	await setFault(runner.sandbox, { endpoint: SEND, latencyMs: 30 });
	const everyone = writeRecipientsCsv(900, { seed: 30 }).phones;
	const first = runner.spawnWorker({}, 'start');
	const a = await create(csvOf(everyone.slice(0, 600)), from);
	const b = await create(csvOf(everyone.slice(300, 900)), from);
	// A firing every 4 s, from the middle of both: its first run lands while they send.
	const schedule = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from,
		source: csvOf(everyone.slice(150, 750)),
		rate: 100,
		cron: '*/4 * * * * *',
		tz: 'UTC',
	});
	if (schedule.kind !== 'schedule') throw new Error('expected a schedule');
	const runs = async () =>
		(await listCampaigns(runner.context)).filter((campaign) => campaign.id.startsWith(schedule.schedule.id));
	await waitFor('the first firing', async () => (await runs()).length >= 1, 30_000);
	await cancel(runner.context, schedule.schedule.id);

	await waitFor('300 sends before the kill', async () => (await sendsTo(everyone)).length >= 300, 60_000, 50);
	await first.kill('SIGKILL');
	runner.spawnWorker();

	const ids = [a.id, b.id, ...(await runs()).map((run) => run.id)];
	const statuses = [];
	for (const id of ids) statuses.push(await waitFor(`campaign ${id} to finish`, finished(id), 180_000));
	await clearFaults(runner.sandbox);

	// Its audience's messages from any number (the tests before it send twice to phones of their own, as they may).
	const sends = await sendsTo(everyone);
	const twice = [...sendsByPhone(sends).entries()].filter(([, list]) => list.length > 1).map(([phone]) => phone);
	expect(twice).toEqual([]);
	// Every phone was claimed once across the campaigns (sent, or unknown where the kill caught it); every other recipient of it is capped.
	const recipients = statuses.reduce(
		(sum, status) => sum + status.counts.sent + status.counts.unknown + status.counts.capped,
		0,
	);
	expect(statuses.every((status) => status.state === 'completed')).toBe(true);
	expect(statuses.reduce((sum, status) => sum + status.counts.sent + status.counts.unknown, 0)).toBe(900);
	expect(statuses.reduce((sum, status) => sum + status.counts.capped, 0)).toBe(recipients - 900);
	expect(statuses.every((status) => status.counts.capped > 0)).toBe(true);
	const capped = (await report(runner.context, b.id)).find((row) => row.outcome === 'capped');
	expect(capped?.error).toMatch(/^frequency cap 1\/24h: next allowed \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});
