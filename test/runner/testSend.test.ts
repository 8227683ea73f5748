/**
 * The create's test send (`test_to`, `--test-to`) over a running `convo-runner start` whose calls
 * to the service go through a counting proxy (the sandbox's log holds accepted sends only, the
 * proxy counts refused attempts too): a good template sends one extra message to the test phone,
 * then every recipient once; an unknown template or a number of another business fails the create
 * with the service's reason, after one attempt, and no recipient is ever sent. A create retried
 * with its Idempotency-Key does not test twice; a draft tests at its start, once. The CLI in a
 * process of its own does the same. No secret in any answer, error or log.
 */
import { randomUUID } from 'node:crypto';

import {
	positionalTemplate,
	runCli,
	startApi,
	startCountingProxy,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	expectNoSecret,
	writeRecipientsCsv,
	type SandboxMessage,
	apiCaller,
} from './support';

jest.setTimeout(180_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let proxy: Awaited<ReturnType<typeof startCountingProxy>>;
let base = '';
/** Every answer and CLI output seen, for the secret scan at the end. */
const seen: Record<string, string> = {};

beforeAll(async () => {
	proxy = await startCountingProxy(runner.sandbox.baseUrl);
	base = await startApi(runner, { CONVO_EXTERNAL_URL: `${proxy.url}/api/external/v2` });
});
afterAll(async () => {
	await proxy?.close();
});

const call = apiCaller(
	() => base,
	TOKEN,
	(text) => (seen[`answer ${Object.keys(seen).length}`] = text),
);

const phoneOf = (seed: number, i: number) => `4915${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
const rowsOf = (seed: number, count: number) =>
	Array.from({ length: count }, (_, i) => ({ phone: `+${phoneOf(seed, i)}`, 1: `Customer ${i}`, 2: `order ${i}` }));
const settings = () => ({
	template_id: positionalTemplate(runner.business).id,
	from: runner.business.phoneNumbers[0],
	rate: 50,
});
/** B8 calls the proxy passed on (the API's process and the CLI's): refused ones too. */
const attempts = () => proxy.requests.filter((url) => url.pathname.endsWith('/send-template')).length;
const sendsTo = async (phones: string[]): Promise<SandboxMessage[]> => {
	const wanted = new Set(phones);
	return (await templateSends(runner.sandbox)).filter((message) => wanted.has(message.to));
};
/** Waits a little, then: nothing was sent to these phones. */
async function expectNeverSent(phones: string[]): Promise<void> {
	await new Promise((resolve) => setTimeout(resolve, 3000));
	expect(await sendsTo(phones)).toEqual([]);
}

test("API create with test_to and a good template: one send to the test phone with the first row's variables, then every recipient once; a retry with its Idempotency-Key does not test again", async () => {
	const test = phoneOf(0, 1);
	const rows = [{ phone: 'bad', 1: 'x', 2: 'y' }, ...rowsOf(1, 5)];
	const before = attempts();
	const created = await call(
		'POST',
		'/api/campaigns',
		{ ...settings(), recipients: rows, test_to: `+${test}` },
		{ 'idempotency-key': 'test-send-good' },
	);
	expect(created.status).toBe(201);
	expect(created.json).toMatchObject({
		state: 'running',
		accepted: 5,
		rejected: 1,
		test_send: { to: test, accepted: true, message_id: expect.any(String) },
	});
	const phones = rows.slice(1).map((_, i) => phoneOf(1, i));
	await waitFor('every recipient sent', async () => (await sendsTo(phones)).length === 5);

	const again = await call(
		'POST',
		'/api/campaigns',
		{ ...settings(), recipients: rows, test_to: `+${test}` },
		{ 'idempotency-key': 'test-send-good' },
	);
	expect(again.status).toBe(200);
	expect(again.json).toMatchObject({ id: created.json.id, replayed: true, test_send: created.json.test_send });

	await new Promise((resolve) => setTimeout(resolve, 1000));
	const tests = await sendsTo([test]);
	expect(tests).toHaveLength(1);
	expect(tests[0]).toMatchObject({
		uuid: created.json.test_send.message_id,
		from: runner.business.phoneNumbers[0],
		template: { id: settings().template_id, variables: { 1: 'Customer 0', 2: 'order 0' } },
	});
	const sends = await sendsTo(phones);
	expect(sends.map((message) => message.to).sort()).toEqual([...phones].sort());
	expect(attempts() - before).toBe(6);
	// The test is no recipient: not counted, not in the report.
	const status = await call('GET', `/api/campaigns/${created.json.id}`);
	expect(status.json).toMatchObject({ state: 'completed', total: 6 });
	expect(status.json.counts).toMatchObject({ sent: 5, rejected: 1 });
	const report = await call('GET', `/api/campaigns/${created.json.id}/report`);
	expect(report.json.map((row: { phone: string }) => row.phone)).not.toContain(test);
});

test.each([
	['an unknown template', () => ({ template_id: randomUUID() }), /404/],
	['a number of another business', () => ({ from: runner.sandbox.fixture.businesses[1].phoneNumbers[0] }), /403/],
	// A template with a dynamic URL button, and rows without buttons: the service's 400.
	[
		'a body the template refuses',
		() => ({ template_id: runner.business.templates.find((t) => t.kind === 'urlButton')?.id }),
		/400/,
	],
])(
	"API create with test_to and %s: an error naming test_to with the service's reason, one attempt, no campaign, no recipient ever sent",
	async (_name, wrong, status) => {
		const seed = _name.includes('unknown') ? 2 : _name.includes('number') ? 3 : 8;
		const test = phoneOf(seed, 99);
		const phones = rowsOf(seed, 5).map((_, i) => phoneOf(seed, i));
		const listed = (await call('GET', '/api/campaigns?limit=500')).json.total as number;
		const before = attempts();
		const refused = await call(
			'POST',
			'/api/campaigns',
			{ ...settings(), ...wrong(), recipients: rowsOf(seed, 5), test_to: test },
			{ 'idempotency-key': `test-send-${seed}` },
		);
		expect(refused.status).toBe(400);
		expect(refused.json.field).toBe('test_to');
		expect(refused.json.message).toMatch(/^test_to \d+: the service refused the test send/);
		expect(refused.json.message).toMatch(status);
		expect(refused.json.message).toMatch(/the service said|buttons/);
		expect(attempts() - before).toBe(1);
		await expectNeverSent([test, ...phones]);
		expect(attempts() - before).toBe(1);
		expect((await call('GET', '/api/campaigns?limit=500')).json.total).toBe(listed);
	},
);

test('test_to is checked like a recipient phone, naming the field', async () => {
	const refused = await call('POST', '/api/campaigns', { ...settings(), recipients: rowsOf(4, 1), test_to: '12ab' });
	expect(refused.status).toBe(400);
	expect(refused.json).toMatchObject({
		field: 'test_to',
		message: expect.stringMatching(/^test_to .*not a phone number/),
	});
});

test('a draft with test_to tests at its start, once: a refused test leaves it a draft that sends nobody; an accepted one starts it', async () => {
	const test = phoneOf(5, 99);
	const bad = await call('POST', '/api/campaigns', {
		...settings(),
		template_id: randomUUID(),
		draft: true,
		test_to: test,
	});
	expect(bad.status).toBe(201);
	await call('POST', `/api/campaigns/${bad.json.id}/recipients`, { recipients: rowsOf(5, 3) });
	const before = attempts();
	const notStarted = await call('POST', `/api/campaigns/${bad.json.id}/start`, {});
	expect(notStarted.status).toBe(400);
	expect(notStarted.json).toMatchObject({ field: 'test_to', message: expect.stringMatching(/^test_to .*404/) });
	expect((await call('GET', `/api/campaigns/${bad.json.id}`)).json.state).toBe('draft');
	expect(attempts() - before).toBe(1);
	await expectNeverSent([test, ...rowsOf(5, 3).map((_, i) => phoneOf(5, i))]);

	const good = await call('POST', '/api/campaigns', { ...settings(), draft: true, test_to: test });
	await call('POST', `/api/campaigns/${good.json.id}/recipients`, { recipients: [{ phone: 'nope' }, ...rowsOf(6, 3)] });
	const started = await call('POST', `/api/campaigns/${good.json.id}/start`, {});
	expect(started.status).toBe(200);
	expect(started.json).toMatchObject({
		state: 'running',
		test_send: { to: test, accepted: true, message_id: expect.any(String) },
	});
	const phones = rowsOf(6, 3).map((_, i) => phoneOf(6, i));
	await waitFor("the draft's recipients sent", async () => (await sendsTo(phones)).length === 3);
	// Started again: no second test.
	expect((await call('POST', `/api/campaigns/${good.json.id}/start`, {})).json).not.toHaveProperty('test_send');
	await new Promise((resolve) => setTimeout(resolve, 1000));
	const tests = await sendsTo([test]);
	expect(tests).toHaveLength(1);
	expect(tests[0].template?.variables).toEqual({ 1: 'Customer 0', 2: 'order 0' });
});

test("CLI --test-to: accepted, the campaign runs and says so; refused, exit 1 with the service's reason naming --test-to and nothing sent", async () => {
	const env = { ...runner.env, CONVO_EXTERNAL_URL: `${proxy.url}/api/external/v2` };
	const csv = writeRecipientsCsv(3, { seed: 71 });
	const test = phoneOf(7, 99);
	const template = positionalTemplate(runner.business).id;
	const from = runner.business.phoneNumbers[0];

	const ok = await runCli(
		[
			'campaign',
			'create',
			'--template',
			template,
			'--from',
			from,
			'--recipients',
			csv.path,
			'--test-to',
			test,
			'--json',
		],
		env,
	);
	seen['cli ok'] = ok.stdout + ok.stderr;
	expect(ok.code).toBe(0);
	const created = JSON.parse(ok.stdout);
	expect(created).toMatchObject({ state: 'running', accepted: 3, test_send: { to: test, accepted: true } });
	await waitFor('the CLI campaign sent', async () => (await sendsTo(csv.phones)).length === 3);
	expect(await sendsTo([test])).toHaveLength(1);

	const badCsv = writeRecipientsCsv(3, { seed: 72 });
	const before = attempts();
	const refused = await runCli(
		[
			'campaign',
			'create',
			'--template',
			randomUUID(),
			'--from',
			from,
			'--recipients',
			badCsv.path,
			'--test-to',
			phoneOf(7, 98),
		],
		env,
	);
	seen['cli refused'] = refused.stdout + refused.stderr;
	expect(refused.code).toBe(1);
	expect(refused.stderr).toMatch(/^convo-runner: --test-to \d+: the service refused the test send \(404/);
	expect(attempts() - before).toBe(1);
	await expectNeverSent([phoneOf(7, 98), ...badCsv.phones]);

	// A cron schedule is tested once, at its creation, with its source's first accepted row.
	const cronCsv = writeRecipientsCsv(2, { seed: 73 });
	const cron = ['--from', from, '--recipients', cronCsv.path, '--cron', '0 0 1 1 *', '--json'];
	const scheduled = await runCli(
		['campaign', 'create', '--template', template, ...cron, '--test-to', phoneOf(7, 97)],
		env,
	);
	seen['cli cron'] = scheduled.stdout + scheduled.stderr;
	expect(scheduled.code).toBe(0);
	expect(JSON.parse(scheduled.stdout)).toMatchObject({
		kind: 'schedule',
		test_send: { to: phoneOf(7, 97), accepted: true },
	});
	const cronTests = await sendsTo([phoneOf(7, 97)]);
	expect(cronTests.map((message) => message.template?.variables)).toEqual([{ 1: 'Customer 0', 2: 'order 0' }]);
	const noSchedule = await runCli(
		['campaign', 'create', '--template', randomUUID(), ...cron, '--test-to', phoneOf(7, 96)],
		env,
	);
	expect(noSchedule.code).toBe(1);
	expect(JSON.parse(noSchedule.stdout).error).toMatch(/^--test-to \d+: the service refused the test send \(404/);
	const list = JSON.parse((await runCli(['campaign', 'list', '--json'], env)).stdout);
	expect(list.schedules).toHaveLength(1);

	const badPhone = await runCli(
		['campaign', 'create', '--template', template, '--from', from, '--recipients', badCsv.path, '--test-to', 'x1'],
		env,
	);
	expect(badPhone.code).toBe(1);
	expect(badPhone.stderr).toMatch(/--test-to .*not a phone number/);
});

test('no secret in any answer, CLI output or log line', () => {
	expect(Object.keys(seen).length).toBeGreaterThan(0);
	expectNoSecret(runner.business, {
		...seen,
		...Object.fromEntries(runner.processes.map((p, i) => [`process ${i}`, p.output()])),
	});
});
