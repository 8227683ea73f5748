/**
 * A create's test send (`test_to`) is held to the audience rules a recipient's send is, over a
 * running `convo-runner start` and the sandbox, counting what the sandbox's sent-message log got:
 * a suppressed test phone gets nothing from a marketing campaign (a transactional one may test
 * it); the frequency cap holds test sends back and counts them (three creates under 1/24h put one
 * message on the phone, the campaigns' own send to it included); a test outside the campaign's
 * send window in the phone's time zone is refused. Each refusal is a 400 naming test_to and the
 * rule, and creates nothing; a dry run of the same create names the same rule in the same words
 * and counts nothing. No runner log line holds a test phone.
 */
import { positionalTemplate, startApi, templateSends, useRunnerUnderTest, waitFor, apiCaller } from './support';

jest.setTimeout(180_000);

const TOKEN = 'test-token-rules-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';
beforeAll(async () => {
	base = await startApi(runner);
});
const call = apiCaller(() => base, TOKEN);

// German mobile numbers: Germany's time zones (Berlin, Büsingen) keep one time, as the window test needs.
const phoneOf = (seed: number, i: number) => `4916${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
const rowsOf = (seed: number, count: number) =>
	Array.from({ length: count }, (_, i) => ({ phone: `+${phoneOf(seed, i)}`, 1: `Customer ${i}`, 2: `order ${i}` }));
const settings = (number = 0) => ({
	template_id: positionalTemplate(runner.business).id,
	from: runner.business.phoneNumbers[number],
	rate: 50,
});
const sendsTo = async (phone: string) =>
	(await templateSends(runner.sandbox)).filter((message) => message.to === phone);
const campaignsListed = async () => (await call('GET', '/api/campaigns?limit=500')).json.total as number;
/** The same create as a dry run: its test_send, which names the rule that would refuse the test, if one would. */
const dryTestSend = async (body: Record<string, unknown>) => {
	const dry = await call('POST', '/api/campaigns', { ...body, dry_run: true });
	expect(dry.json.kind).toBe('dry_run');
	return dry.json.test_send as { to: string; sent: false; held?: string; note: string };
};
/** The refusal's message for a test held back by `held`, as a dry run words the rule. */
const refusalOf = (phone: string, held: string | undefined) =>
	`test_to ${phone}: ${held}; nothing was started, no recipient was sent`;
const testPhones: string[] = [];

test('a suppressed test phone: a marketing create is refused naming test_to and the list, nothing is created or sent; a transactional campaign may test it', async () => {
	const test = phoneOf(1, 99);
	testPhones.push(test);
	expect(
		(await call('POST', '/api/suppressions', { phone: `+${test}`, reason: 'asked not to be contacted' })).status,
	).toBe(200);
	const listed = await campaignsListed();
	const body = { ...settings(), recipients: rowsOf(1, 3), test_to: test };
	const dry = await dryTestSend(body);
	const refused = await call('POST', '/api/campaigns', body);
	expect(refused.status).toBe(400);
	expect(refused.json.field).toBe('test_to');
	expect(refused.json.message).toMatch(
		/^test_to \d+: the phone is on the suppression list \(operator, .*\), and a campaign that is not transactional sends it nothing, a test neither; nothing was started/,
	);
	// The dry run named the same rule in the same words.
	expect(refused.json.message).toBe(refusalOf(test, dry.held));
	expect(dry).toMatchObject({ to: test, sent: false, note: expect.stringMatching(/would be refused/) });
	expect(await campaignsListed()).toBe(listed);

	// A draft tests at its start: refused the same way, it stays a draft.
	const draft = await call('POST', '/api/campaigns', { ...settings(), draft: true, test_to: test });
	await call('POST', `/api/campaigns/${draft.json.id}/recipients`, { recipients: rowsOf(2, 2) });
	const notStarted = await call('POST', `/api/campaigns/${draft.json.id}/start`, {});
	expect(notStarted.status).toBe(400);
	expect(notStarted.json).toMatchObject({ field: 'test_to', message: expect.stringMatching(/suppression list/) });
	expect((await call('GET', `/api/campaigns/${draft.json.id}`)).json.state).toBe('draft');

	await new Promise((resolve) => setTimeout(resolve, 2000));
	expect(await sendsTo(test)).toEqual([]);
	for (const [i] of rowsOf(1, 3).entries()) expect(await sendsTo(phoneOf(1, i))).toEqual([]);

	// A transactional campaign is exempt from the list, its test too.
	const exempt = { ...settings(), recipients: rowsOf(3, 1), test_to: test, transactional: true };
	expect((await dryTestSend(exempt)).held).toBeUndefined();
	const transactional = await call('POST', '/api/campaigns', exempt);
	expect(transactional.status).toBe(201);
	expect(transactional.json.test_send).toMatchObject({ to: test, accepted: true });
	await waitFor('the transactional test send', async () => (await sendsTo(test)).length === 1);
});

test('under a 1/24h cap, three creates testing one phone that is also a recipient put one message on it: the test counts, the later tests are refused naming test_to and the rule', async () => {
	const number = 1;
	const from = runner.business.phoneNumbers[number];
	expect((await call('PUT', `/api/numbers/${from}/cap`, { policy: '1/24h' })).status).toBe(200);
	const test = phoneOf(4, 0);
	testPhones.push(test);
	const rows = rowsOf(4, 3);
	// A dry run first looks at the cap and counts nothing: the first create's test still goes.
	expect(await dryTestSend({ ...settings(number), recipients: rows, test_to: test })).toEqual({
		to: test,
		sent: false,
		note: expect.stringMatching(/sends it first/),
	});
	const answers = [];
	for (let i = 0; i < 3; i++)
		answers.push(await call('POST', '/api/campaigns', { ...settings(number), recipients: rows, test_to: test }));
	expect(answers.map((answer) => answer.status)).toEqual([201, 400, 400]);
	expect(answers[0].json.test_send).toMatchObject({ to: test, accepted: true });
	for (const refused of answers.slice(1)) {
		expect(refused.json.field).toBe('test_to');
		expect(refused.json.message).toMatch(
			/^test_to \d+: frequency cap 1\/24h: next allowed \d{4}-\d\d-\d\dT[\d:]+Z; a test send counts toward the cap/,
		);
	}
	// Once the test counted, a dry run names the rule as the refusals did.
	const held = (await dryTestSend({ ...settings(number), recipients: rows, test_to: test })).held;
	expect(answers[2].json.message).toBe(refusalOf(test, held));
	const id = answers[0].json.id as string;
	const done = await waitFor('the campaign to complete', async () => {
		const got = await call('GET', `/api/campaigns/${id}`);
		return got.json.state === 'completed' ? got.json : undefined;
	});
	// The test took the phone's one message of the day: its row in the campaign is capped.
	expect(done.counts).toMatchObject({ sent: 2, capped: 1 });
	await new Promise((resolve) => setTimeout(resolve, 1000));
	expect(await sendsTo(test)).toHaveLength(1);
	for (const i of [1, 2]) expect(await sendsTo(phoneOf(4, i))).toHaveLength(1);
});

test('a refused test send gives its count back: the next test of the phone goes', async () => {
	const number = 2;
	const from = runner.business.phoneNumbers[number];
	expect((await call('PUT', `/api/numbers/${from}/cap`, { policy: '1/24h' })).status).toBe(200);
	const test = phoneOf(5, 99);
	testPhones.push(test);
	const unknownTemplate = await call('POST', '/api/campaigns', {
		...settings(number),
		template_id: '00000000-0000-4000-8000-000000000000',
		recipients: rowsOf(5, 1),
		test_to: test,
	});
	expect(unknownTemplate.status).toBe(400);
	expect(unknownTemplate.json.message).toMatch(/the service refused the test send/);
	const accepted = await call('POST', '/api/campaigns', {
		...settings(number),
		recipients: rowsOf(5, 1),
		test_to: test,
	});
	expect(accepted.status).toBe(201);
	await waitFor('the test send', async () => (await sendsTo(test)).length === 1);
});

test("a test outside the campaign's send window in the test phone's time zone is refused naming test_to and the window; inside it, it goes", async () => {
	const test = phoneOf(6, 99);
	testPhones.push(test);
	// An hour of the day twelve hours from now in Berlin: closed now whatever the date.
	const berlinHour = Number(
		new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', hour: '2-digit', hourCycle: 'h23' }).format(
			new Date(),
		),
	);
	const opens = (berlinHour + 12) % 24;
	const closed = `${String(opens).padStart(2, '0')}:00-${String(opens + 1).padStart(2, '0')}:00`;
	const listed = await campaignsListed();
	const body = { ...settings(), recipients: rowsOf(6, 2), test_to: test, window: closed };
	const dry = await dryTestSend(body);
	const refused = await call('POST', '/api/campaigns', body);
	expect(refused.status).toBe(400);
	expect(refused.json.field).toBe('test_to');
	expect(refused.json.message).toMatch(
		/^test_to \d+: outside the campaign's send window \(\d\d:00-\d\d:00\) in the test phone's time zone \(the time zones of DE\); it next opens \d{4}-.*Z, and a test goes at once/,
	);
	expect(refused.json.message).toBe(refusalOf(test, dry.held));
	expect(await campaignsListed()).toBe(listed);
	await new Promise((resolve) => setTimeout(resolve, 2000));
	expect(await sendsTo(test)).toEqual([]);

	const open = await call('POST', '/api/campaigns', {
		...settings(),
		recipients: rowsOf(7, 1),
		test_to: test,
		window: '00:00-24:00',
	});
	expect(open.status).toBe(201);
	await waitFor('the test send inside the window', async () => (await sendsTo(test)).length === 1);
});

test('no runner log line holds a test phone', () => {
	expect(testPhones.length).toBeGreaterThan(0);
	const log = runner.processes.map((process) => process.output()).join('\n');
	expect(log).toContain('test send accepted');
	for (const phone of testPhones) expect(log).not.toContain(phone);
});
