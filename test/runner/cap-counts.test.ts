/**
 * How campaigns count against the frequency cap (#23), and how a number's cap is set, with a runner
 * process, a real Redis and the sandbox, counted in the sandbox's own log: a dry run counts what the
 * cap would hold back, a transactional campaign is neither capped nor counted, a claim proved not
 * sent gives its count back and one that may have sent keeps it, and the CLI and the API set, show
 * and clear a policy. Nothing here is measured in time nor killed (that is cap.test.ts), so it runs
 * beside other files. The business default is 1 per 24 h (RUNNER_FREQUENCY_CAP) on the first
 * number; the second number has policies of its own.
 */

import { campaignStatus, createCampaign, reconcileCampaign, retryNotSent } from '../../runner/src/core/campaigns';
import { clearCap, setCap, showCap } from '../../runner/src/core/audience';
import {
	positionalTemplate,
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
import { capKit } from './capSupport';

jest.setTimeout(120_000);

const runner = useRunnerUnderTest({ RUNNER_FREQUENCY_CAP: '1/24h', RUNNER_CONCURRENCY: '10' });
const SEND = 'POST /api/external/v2/send-template';

beforeAll(() => runner.spawnWorker());

const { csvOf, finished, create } = capKit(runner);

const sendsTo = async (phones: string[]): Promise<SandboxMessage[]> =>
	(await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to));

/** Sends once to each of these phones under the business default (1/24h): each is then at its cap. */
async function sendToCap(phones: string[]): Promise<void> {
	const created = await create(csvOf(phones), runner.business.phoneNumbers[0]);
	expect((await waitFor('the first sends', finished(created.id), 60_000)).counts).toMatchObject({
		sent: phones.length,
		capped: 0,
	});
}

test("a dry run counts the rows the cap would hold back now, as the real run then caps them; the number's own policy wins over the default, and `none` lifts it", async () => {
	const from = runner.business.phoneNumbers[0];
	const capped = writeRecipientsCsv(10, { seed: 30 }).phones;
	const fresh = writeRecipientsCsv(5, { seed: 31 }).phones;
	await sendToCap(capped);
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
	const phones = writeRecipientsCsv(5, { seed: 36 }).phones;
	await sendToCap(phones);
	const before = await Promise.all(
		phones.map((phone) => runner.context.redis.get(runner.context.keys.capSends(from, phone))),
	);
	// Each phone counts its first send: a campaign that is not transactional would cap them all now.
	expect(before.every((times) => times !== null)).toBe(true);
	// As optout's create makes it (`--transactional`).
	const created = await create(csvOf(phones), from, { transactional: true });
	const status = await waitFor('the transactional campaign to finish', finished(created.id), 60_000);
	expect(status.counts).toMatchObject({ sent: 5, capped: 0 });
	expect([...sendsByPhone(await sendsTo(phones)).values()].map((list) => list.length)).toEqual(phones.map(() => 2));
	expect(
		await Promise.all(phones.map((phone) => runner.context.redis.get(runner.context.keys.capSends(from, phone)))),
	).toEqual(before);
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
