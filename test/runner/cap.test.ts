// @serial: SIGKILLs a worker mid-campaign, and measures the frequency cap's window in wall time
/**
 * One frequency cap across campaigns (#23), with runner processes, a real Redis and the sandbox,
 * counted in the sandbox's own log. The business default here is 1 per 24 h (RUNNER_FREQUENCY_CAP)
 * on the first number; the second number has policies of its own, short ones (seconds), so waiting
 * and expiry are seen within a test.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
	campaignStatus,
	cancel,
	createCampaign,
	listCampaigns,
	reconcileCampaign,
	retryNotSent,
} from '../../runner/src/core/campaigns';
import { clearCap, setCap, showCap } from '../../runner/src/core/audience';
import {
	positionalTemplate,
	report,
	runCli,
	sendsByPhone,
	setFault,
	clearFaults,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
	type SandboxMessage,
} from './support';

jest.setTimeout(420_000);

// Job lock and feeder watch shortened from 15 s: the killed process's jobs come back sooner.
const runner = useRunnerUnderTest({
	RUNNER_FREQUENCY_CAP: '1/24h',
	RUNNER_CONCURRENCY: '10',
	RUNNER_JOB_LOCK: '3s',
	RUNNER_FEEDER_STALL: '3s',
});
const SEND = 'POST /api/external/v2/send-template';

// One process from the start; the first test adds a second and kills it.
beforeAll(() => runner.spawnWorker());

/** A CSV of these phones. */
function csvOf(phones: string[]): string {
	const path = join(mkdtempSync(join(tmpdir(), 'convo-cap-')), 'recipients.csv');
	writeFileSync(path, `phone,1,2\n${phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`).join('\n')}\n`);
	return path;
}

const finished = (id: string) => async () => {
	const status = await campaignStatus(runner.context, id);
	return ['completed', 'failed', 'cancelled'].includes(status.state) ? status : undefined;
};

async function create(source: string, from: string, extra: Record<string, unknown> = {}) {
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from,
		source,
		rate: 100,
		...extra,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	return created;
}

const sendsTo = async (phones: string[]): Promise<SandboxMessage[]> =>
	(await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to));

test('two campaigns and a firing of a schedule to overlapping audiences under 1 per 24 h, two processes, one killed mid-run: no phone receives two', async () => {
	const from = runner.business.phoneNumbers[0];
	// Sends in flight at the kill: a claim the dead process held may have sent, so it keeps its count (unknown).
	await setFault(runner.sandbox, { endpoint: SEND, latencyMs: 30 });
	const everyone = writeRecipientsCsv(900, { seed: 30 }).phones;
	const first = runner.spawnWorker({}, 'start');
	const a = await create(csvOf(everyone.slice(0, 600)), from);
	const b = await create(csvOf(everyone.slice(300, 900)), from);
	// A firing every 4 s, from the middle of both: its first campaign lands while they send.
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

	await waitFor(
		'300 sends before the kill',
		async () => (await templateSends(runner.sandbox)).length >= 300,
		60_000,
		50,
	);
	await first.kill('SIGKILL');
	runner.spawnWorker();

	const ids = [a.id, b.id, ...(await runs()).map((run) => run.id)];
	const statuses = [];
	for (const id of ids) statuses.push(await waitFor(`campaign ${id} to finish`, finished(id), 180_000));
	await clearFaults(runner.sandbox);

	const sends = await templateSends(runner.sandbox);
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

test("a dry run counts the rows the cap would hold back now, as the real run then caps them; the number's own policy wins over the default, and `none` lifts it", async () => {
	const from = runner.business.phoneNumbers[0];
	const capped = writeRecipientsCsv(900, { seed: 30 }).phones.slice(0, 10);
	const fresh = writeRecipientsCsv(5, { seed: 31 }).phones;
	const dry = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from,
		source: csvOf([...capped, ...fresh]),
		dryRun: true,
	});
	if (dry.kind !== 'dry_run') throw new Error('expected a dry run');
	expect(dry.counts).toEqual({ accepted: 15, rejected: 0, suppressed: 0, capped: 10 });
	expect(dry.reasons).toEqual([
		expect.objectContaining({ outcome: 'capped', reason: 'frequency cap 1/24h', count: 10 }),
	]);
	// The real run of the same rows ends as the dry run said.
	const real = await create(csvOf([...capped, ...fresh]), from);
	expect((await waitFor('the real run to finish', finished(real.id), 60_000)).counts).toMatchObject({
		capped: 10,
		sent: 5,
		rejected: 0,
	});

	expect(await showCap(runner.context, from)).toMatchObject({
		policy: '1/24h',
		source: 'default',
		number_policy: null,
		default_policy: '1/24h',
	});
	expect(await setCap(runner.context, from, 'none')).toMatchObject({ policy: 'none', source: 'number' });
	const lifted = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from,
		source: csvOf(capped),
		dryRun: true,
	});
	expect(lifted.kind === 'dry_run' && lifted.counts.capped).toBe(0);
	expect(await clearCap(runner.context, from)).toMatchObject({ policy: '1/24h', source: 'default' });
});

test('a transactional campaign is neither capped nor counted', async () => {
	const from = runner.business.phoneNumbers[0];
	const phones = writeRecipientsCsv(900, { seed: 30 }).phones.slice(0, 5);
	const before = await Promise.all(
		phones.map((phone) => runner.context.redis.get(runner.context.keys.capSends(from, phone))),
	);
	// optout's create sets the field (`--transactional`); this test writes it on a campaign scheduled a moment ahead.
	const created = await create(csvOf(phones), from, { at: new Date(Date.now() + 3000).toISOString() });
	await runner.context.redis.hset(runner.context.keys.campaign(from, created.id), 'transactional', '1');
	const status = await waitFor('the transactional campaign to finish', finished(created.id), 60_000);
	expect(status.counts).toMatchObject({ sent: 5, capped: 0 });
	expect(
		await Promise.all(phones.map((phone) => runner.context.redis.get(runner.context.keys.capSends(from, phone)))),
	).toEqual(before);
});

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

test('a claim proved not sent (503) gives its count back: the retry is sent, not capped by its own claim', async () => {
	const from = runner.business.phoneNumbers[1];
	await setCap(runner.context, from, '1/1h');
	await setFault(runner.sandbox, { endpoint: SEND, errorRate: 0.5, errorStatus: 503 });
	const phones = writeRecipientsCsv(10, { seed: 33 }).phones;
	const created = await create(csvOf(phones), from);
	const status = await waitFor('the campaign to finish', finished(created.id), 120_000);
	await clearFaults(runner.sandbox);
	expect((await campaignStatus(runner.context, created.id)).counts).toMatchObject({ sent: 10, capped: 0 });
	expect(status.counts.sent).toBe(10);
	const campaign = await runner.context.redis.hget(runner.context.keys.campaign(from, created.id), 'retries');
	expect(Number(campaign)).toBeGreaterThan(0);
	expect([...sendsByPhone(await sendsTo(phones)).values()].map((list) => list.length)).toEqual(phones.map(() => 1));
	// Each phone holds its one send, not the claims that were given back.
	for (const phone of phones)
		expect((await runner.context.redis.get(runner.context.keys.capSends(from, phone)))?.split(',')).toHaveLength(1);
	await clearCap(runner.context, from);
});

test('a send left unknown keeps its count until reconcile proves it not sent; then the retry is sent, not capped', async () => {
	const from = runner.business.phoneNumbers[1];
	await setCap(runner.context, from, '1/1h');
	// The connection drops after the request was written: the runner cannot tell whether it was sent.
	await setFault(runner.sandbox, { endpoint: SEND, dropConnection: true });
	const phones = writeRecipientsCsv(3, { seed: 35 }).phones;
	const created = await create(csvOf(phones), from);
	expect((await waitFor('the campaign to finish', finished(created.id), 60_000)).counts).toMatchObject({ unknown: 3 });
	await clearFaults(runner.sandbox);
	// Unknown may have sent: another campaign to these phones is capped.
	const meanwhile = await create(csvOf(phones), from);
	expect((await waitFor('the second campaign to finish', finished(meanwhile.id), 60_000)).counts).toMatchObject({
		capped: 3,
	});

	expect(await reconcileCampaign(runner.context, created.id)).toMatchObject({ not_sent: 3 });
	expect(await retryNotSent(runner.context, created.id)).toMatchObject({ requeued: 3 });
	const retried = await waitFor('the retried campaign to finish', finished(created.id), 60_000);
	expect(retried.counts).toMatchObject({ sent: 3, capped: 0, unknown: 0 });
	expect([...sendsByPhone(await sendsTo(phones)).values()].map((list) => list.length)).toEqual([1, 1, 1]);
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

test("the CLI sets, shows and clears a number's cap, and names the setting and the rule when the policy is wrong", async () => {
	const from = runner.business.phoneNumbers[1];
	const set = await runCli(['cap', 'set', '1/24h,3/7d', '--from', from], runner.env);
	expect(set.stdout).toContain(
		`${from}: at most 1/24h,3/7d per phone across campaigns (the number's own; the default 1/24h does not apply to it)`,
	);
	const shown = await runCli(['cap', 'show', '--from', from, '--json'], runner.env);
	expect(JSON.parse(shown.stdout)).toMatchObject({ from, policy: '1/24h,3/7d', source: 'number' });
	const wrong = await runCli(['cap', 'set', '1/24x', '--from', from], runner.env);
	expect(wrong.code).toBe(1);
	expect(wrong.stderr).toContain('<policy>: rule 1 must be like 1/24h or 1/24h,3/7d');
	const cleared = await runCli(['cap', 'clear', '--from', from], runner.env);
	expect(cleared.stdout).toContain('(the default (RUNNER_FREQUENCY_CAP))');
});

test("the API sets, shows and clears a number's cap, naming the field and the rule when one is wrong", async () => {
	const token = 'cap-test-token-0123456789';
	const base = await startApi(runner, { RUNNER_TOKEN: token });
	const from = runner.business.phoneNumbers[1];
	const call = async (method: string, path: string, body?: unknown) => {
		const response = await fetch(`${base}${path}`, {
			method,
			headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
			body: body ? JSON.stringify(body) : undefined,
		});
		return { status: response.status, json: (await response.json()) as Record<string, unknown> };
	};
	expect(await call('PUT', `/api/numbers/${from}/cap`, { policy: '2/1h' })).toEqual({
		status: 200,
		json: { from, policy: '2/1h', source: 'number', number_policy: '2/1h', default_policy: '1/24h' },
	});
	expect((await call('GET', `/api/numbers/${from}/cap`)).json).toMatchObject({ policy: '2/1h', source: 'number' });
	const wrong = await call('PUT', `/api/numbers/${from}/cap`, { policy: '0/1h' });
	expect(wrong).toEqual({
		status: 400,
		json: expect.objectContaining({
			field: 'policy',
			message: 'policy: rule 1 must allow 1 to 100 messages per period',
		}),
	});
	const badNumber = await call('GET', '/api/numbers/12/cap');
	expect(badNumber).toEqual({
		status: 400,
		json: expect.objectContaining({ field: 'from', message: expect.stringMatching(/^from /) }),
	});
	expect((await call('DELETE', `/api/numbers/${from}/cap`)).json).toMatchObject({
		policy: '1/24h',
		source: 'default',
		number_policy: null,
	});
});
