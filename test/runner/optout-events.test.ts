/**
 * Opt-out events that come late, twice, at once or for another business, and the suppression list's
 * bounds: one `convo-runner start` (API, workers, feeder) on a real Redis and the sandbox; the
 * service's message_created deliveries are posted to the runner's events endpoint as the service
 * posts them, each with the message's own createdAt.
 */
import { EVENTS_PATH } from '../../runner/src/http/eventRoutes';
import {
	apiCaller,
	positionalTemplate,
	runCli,
	startApi,
	useRunnerUnderTest,
	waitFor,
	waitForFeederTick,
} from './support';

jest.setTimeout(240_000);

const TOKEN = 'optout-events-token-0123456789ab';
const HEADER = 'X-Convo-Events';
const SECRET = 'optout-events-secret-9e21c7b04d';
const MAX_SUPPRESSIONS = 60;
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_EVENTS_HEADER_NAME: HEADER,
	RUNNER_EVENTS_HEADER_VALUE: SECRET,
	// Every log line the runner writes is read for phone numbers.
	LOG_LEVEL: 'debug',
	RUNNER_MAX_SUPPRESSIONS: String(MAX_SUPPRESSIONS),
	RUNNER_MAX_SENDING_NUMBERS: '3',
});
let base = '';
const call = apiCaller(() => base, TOKEN);

const phoneOf = (seed: number, i: number) => `4915${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
/** Every phone a test here used: none may be in the runner's log. */
const used = new Set<string>();
const phone = (seed: number, i = 0) => {
	const digits = phoneOf(seed, i);
	used.add(digits);
	return digits;
};

const T0 = Date.parse('2026-11-20T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

/** One message_created delivery of `text` from `from`, stamped `createdAt`, to the business's first number unless `to` says. */
async function deliver(from: string, text: string, createdAt: string, to = runner.business.phoneNumbers[0]) {
	const response = await fetch(`${base}${EVENTS_PATH}`, {
		method: 'POST',
		headers: { [HEADER]: SECRET, 'content-type': 'application/json' },
		body: JSON.stringify({
			event: 'message_created',
			payload: { from, to, status: 'received', channel: 'whatsapp', text, createdAt },
		}),
	});
	return { status: response.status, text: await response.text() };
}

async function entryOf(digits: string) {
	return (await call('GET', `/api/suppressions/${digits}`)).json.entry as null | {
		source: string;
		at: string;
		reason: string;
	};
}

/** A campaign from `from` (a business number unless told), scheduled tomorrow: it holds its number's copy until it ends. */
async function scheduled(recipients: string[], from = runner.business.phoneNumbers[0]) {
	return call('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from,
		at: new Date(Date.now() + 86_400_000).toISOString(),
		recipients: recipients.map((digits) => ({ phone: digits, 1: 'a', 2: 'b' })),
	});
}

const copyOf = (from: string) => runner.context.redis.hgetall(runner.context.keys.suppression.copy(from));

beforeAll(async () => {
	base = await startApi(runner);
	// The business's first number has a campaign (so its keywords count) that keeps its copy of the list.
	expect((await scheduled([phone(99)])).status).toBe(201);
});

test('the newest keyword message wins by its own time: a late START after a newer STOP, a late STOP after a newer START, and replays change nothing', async () => {
	const stopper = phone(1);
	expect((await deliver(stopper, 'STOP', at(20))).status).toBe(200);
	// The START was written before the STOP, and delivered after it (a retry): the phone stays listed.
	expect((await deliver(stopper, 'START', at(10))).status).toBe(200);
	expect(await entryOf(stopper)).toMatchObject({ source: 'keyword', at: at(20) });
	// A replay of the STOP changes nothing either, nor does a replay of the START.
	await deliver(stopper, 'STOP', at(20));
	await deliver(stopper, 'START', at(10));
	expect(await entryOf(stopper)).toMatchObject({ source: 'keyword', at: at(20) });
	// A newer START lifts it; then the old STOP replayed does not put it back.
	await deliver(stopper, 'start', at(30));
	expect(await entryOf(stopper)).toBeNull();
	await deliver(stopper, 'Stop!', at(20));
	await deliver(stopper, 'STOP', at(25));
	await deliver(stopper, 'start', at(30));
	expect(await entryOf(stopper)).toBeNull();

	// The other order: a START, then an older STOP delivered late.
	const starter = phone(2);
	await deliver(starter, 'START', at(50));
	await deliver(starter, 'STOP', at(40));
	expect(await entryOf(starter)).toBeNull();
	await deliver(starter, 'STOP', at(60));
	expect(await entryOf(starter)).toMatchObject({ source: 'keyword', at: at(60) });
	// The claim reads the number's copy: it says the same.
	expect(Object.keys(await copyOf(runner.business.phoneNumbers[0]))).toEqual(expect.arrayContaining([starter]));
	expect(Object.keys(await copyOf(runner.business.phoneNumbers[0]))).not.toContain(stopper);
});

test("a START lifts only a keyword's entry: an operator's, a workflow's or an import's stays until the token removes it", async () => {
	const byOperator = phone(3, 0);
	const byWorkflow = phone(3, 1);
	const byImport = phone(3, 2);
	expect((await call('POST', '/api/suppressions', { phone: byOperator, reason: 'legal request' })).json).toMatchObject({
		source: 'operator',
		added: true,
	});
	expect((await call('POST', '/api/suppressions', { phone: byWorkflow, source: 'workflow' })).json).toMatchObject({
		source: 'workflow',
		added: true,
	});
	expect(
		(await call('POST', '/api/suppressions/import', `phone\n${byImport}\n`, { 'content-type': 'text/csv' })).json,
	).toMatchObject({ added: 1 });
	for (const [i, digits] of [byOperator, byWorkflow, byImport].entries()) {
		await deliver(digits, 'STOP', at(100 + i));
		await deliver(digits, 'START', at(110 + i));
	}
	expect([
		(await entryOf(byOperator))?.source,
		(await entryOf(byWorkflow))?.source,
		(await entryOf(byImport))?.source,
	]).toEqual(['operator', 'workflow', 'import']);

	// A keyword's entry that an operator then adds becomes the operator's: START leaves it too.
	const both = phone(3, 3);
	await deliver(both, 'STOP', at(120));
	expect((await call('POST', '/api/suppressions', { phone: both, reason: 'asked by phone too' })).json).toMatchObject({
		source: 'operator',
		reason: 'asked by phone too',
		added: true,
	});
	await deliver(both, 'START', at(130));
	expect(await entryOf(both)).toMatchObject({ source: 'operator' });

	// The token removes any of them.
	expect((await call('DELETE', `/api/suppressions/${byOperator}`)).json).toEqual({ phone: byOperator, removed: true });
	expect(await entryOf(byOperator)).toBeNull();
});

test('40 alternating STOP/START deliveries for one phone at once: every one answered 2xx, the newest decides, the copy agrees, no phone in the log', async () => {
	const from = runner.business.phoneNumbers[0];
	for (const [seed, newestStops] of [
		[4, true],
		[5, false],
	] as const) {
		const target = phone(seed);
		// Message i was written at second i; the newest (39) is a STOP in the first round, a START in the second.
		const messages = Array.from({ length: 40 }, (_, i) => ({
			text: (i % 2 === 1) === newestStops ? 'STOP' : 'START',
			createdAt: at(200 + i),
		}));
		// Delivered in an order unlike the one they were written in, all at once.
		const order = messages.map((_, i) => (i * 17) % 40);
		const answers = await Promise.all(order.map((i) => deliver(target, messages[i].text, messages[i].createdAt)));
		expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
		expect(await entryOf(target)).toEqual(
			newestStops ? expect.objectContaining({ source: 'keyword', at: at(239) }) : null,
		);
		expect(Object.keys(await copyOf(from)).includes(target)).toBe(newestStops);
	}
	const logs = runner.processes.map((process) => process.output()).join('\n');
	expect(logs).toContain('an opt-out keyword came in');
	expect([...used].filter((digits) => logs.includes(digits) || logs.includes(digits.slice(2)))).toEqual([]);
});

test("a delivery that finds the number's copy missing an earlier change brings the copy up at once", async () => {
	const { redis, keys } = runner.context;
	const from = runner.business.phoneNumbers[0];
	const earlier = phone(9, 0);
	const later = phone(9, 1);
	expect((await call('POST', '/api/suppressions', { phone: earlier })).json.added).toBe(true);
	// As a process killed between the list's write and the copy's leaves it: the copy one change behind.
	await redis.multi().hdel(keys.suppression.copy(from), earlier).decr(keys.suppression.copyVersion(from)).exec();
	expect((await deliver(later, 'STOP', at(500))).status).toBe(200);
	expect(await redis.hmget(keys.suppression.copy(from), earlier, later)).toEqual([
		expect.stringMatching(/^on the suppression list/),
		expect.stringMatching(/^on the suppression list/),
	]);
	expect(await redis.get(keys.suppression.copyVersion(from))).toBe(await redis.get(keys.suppression.version));
});

test("a keyword sent to another business's number changes nothing", async () => {
	const foreign = runner.sandbox.fixture.businesses[1].phoneNumbers[0];
	const listed = phone(6, 0);
	const free = phone(6, 1);
	await deliver(listed, 'STOP', at(300));
	expect(await entryOf(listed)).toMatchObject({ source: 'keyword' });
	const before = (await call('GET', '/api/suppressions/export')).text;
	expect((await deliver(listed, 'START', at(310), foreign)).status).toBe(200);
	expect((await deliver(free, 'STOP', at(310), foreign)).status).toBe(200);
	expect((await call('GET', '/api/suppressions/export')).text).toBe(before);
	// The number's own messages still count, and the foreign START left no trace that would hide them.
	await deliver(listed, 'START', at(305));
	expect(await entryOf(listed)).toBeNull();

	// With RUNNER_NUMBERS set, a campaign from any other number is refused naming the field.
	const env = { ...runner.env, RUNNER_NUMBERS: runner.business.phoneNumbers.join(',') };
	const refused = await runCli(
		[
			'campaign',
			'create',
			'--template',
			positionalTemplate(runner.business).id,
			'--from',
			foreign,
			'--recipients',
			'/nonexistent.csv',
			'--json',
		],
		env,
	);
	expect(refused.code).toBe(1);
	expect(JSON.parse(refused.stdout).error).toMatch(/^--from is not one of the business's numbers \(RUNNER_NUMBERS\)/);
});

test("a campaign from another business's number is not sent and pauses, keeping its copy; resumed after the phone is put on the list, its claim suppresses it, it ends and its copy goes", async () => {
	const { redis, keys } = runner.context;
	const foreign = runner.sandbox.fixture.businesses[1].phoneNumbers[1];
	const target = phone(10);
	const created = await call('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from: foreign,
		rate: 50,
		recipients: [{ phone: target, 1: 'a', 2: 'b' }],
	});
	expect(created.status).toBe(201);
	// The service refuses the number (403): the recipient is not sent, and the campaign pauses for it.
	const paused = await waitFor(
		'the campaign to pause',
		async () => {
			const got = (await call('GET', `/api/campaigns/${created.json.id}`)).json;
			return got.state === 'paused' ? got : undefined;
		},
		60_000,
	);
	expect(paused).toMatchObject({ paused_reason: 'number_refused', counts: { pending: 1, sent: 0 } });
	// Paused, it may be resumed: its number keeps its copy of the list.
	await waitForFeederTick(runner.context);
	expect(await redis.exists(keys.suppression.copyVersion(foreign))).toBe(1);

	// Put on the list while paused; the resumed campaign's claim must see it, and nothing is sent.
	expect((await call('POST', '/api/suppressions', { phone: target })).json.added).toBe(true);
	expect((await call('POST', `/api/campaigns/${created.json.id}/resume`)).status).toBe(200);
	const ended = await waitFor(
		'the campaign to end',
		async () => {
			const got = (await call('GET', `/api/campaigns/${created.json.id}`)).json;
			return got.state === 'completed' ? got : undefined;
		},
		60_000,
	);
	expect(ended.counts).toMatchObject({ suppressed: 1, sent: 0, pending: 0 });
	await waitForFeederTick(runner.context);
	await waitForFeederTick(runner.context);
	expect(await redis.exists(keys.suppression.copyVersion(foreign))).toBe(0);
	expect(await redis.sismember(keys.suppression.copies, foreign)).toBe(0);
});

test("a number's copy goes when its last campaign ends or is cancelled; at most RUNNER_MAX_SENDING_NUMBERS numbers hold one", async () => {
	const { redis, keys } = runner.context;
	const [first, second, third, fourth] = runner.business.phoneNumbers.slice(1, 5);
	const holds = async (from: string) =>
		(await redis.exists(keys.suppression.copyVersion(from))) === 1 &&
		(await redis.sismember(keys.suppression.copies, from)) === 1;

	// A campaign that completes: its number's copy goes at the next feeder ticks.
	const sent = await call('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from: first,
		rate: 50,
		recipients: [{ phone: phone(7, 0), 1: 'a', 2: 'b' }],
	});
	expect(sent.status).toBe(201);
	await waitFor(
		'the campaign to complete',
		async () => (await call('GET', `/api/campaigns/${sent.json.id}`)).json.state === 'completed',
		60_000,
	);
	await waitForFeederTick(runner.context);
	await waitForFeederTick(runner.context);
	expect(await holds(first)).toBe(false);
	expect(await redis.exists(keys.suppression.copy(first), keys.suppression.copyUsers(first))).toBe(0);

	// Two scheduled campaigns hold theirs (with the first business number's, three); a fourth number is refused naming the cap.
	const a = await scheduled([phone(7, 1)], second);
	const b = await scheduled([phone(7, 2)], third);
	expect([a.status, b.status, await holds(second), await holds(third)]).toEqual([201, 201, true, true]);
	expect(Object.keys(await copyOf(second)).sort()).toEqual(
		Object.keys(await copyOf(runner.business.phoneNumbers[0])).sort(),
	);
	const over = await scheduled([phone(7, 3)], fourth);
	expect(over.status).toBe(409);
	expect(over.json).toMatchObject({
		field: 'from',
		message: expect.stringContaining('at most 3 may (RUNNER_MAX_SENDING_NUMBERS)'),
	});

	// Cancelled before it started: the copy goes, and the fourth number may hold one.
	expect((await call('POST', `/api/campaigns/${a.json.id}/cancel`)).status).toBe(200);
	await waitForFeederTick(runner.context);
	await waitForFeederTick(runner.context);
	expect([await holds(second), await holds(third)]).toEqual([false, true]);
	expect((await scheduled([phone(7, 3)], fourth)).status).toBe(201);
	expect(await holds(fourth)).toBe(true);
});

test('the list is capped (RUNNER_MAX_SUPPRESSIONS): an add, an import and an opt-out past it are refused naming the limit', async () => {
	const total = (await call('GET', '/api/suppressions?limit=1')).json.total as number;
	const room = MAX_SUPPRESSIONS - total;
	expect(room).toBeGreaterThan(2);
	const fill = Array.from({ length: room }, (_, i) => phone(8, i));
	const imported = await call(
		'POST',
		'/api/suppressions/import',
		`phone\n${[...fill, phone(8, 900), phone(8, 901)].join('\n')}\n`,
		{ 'content-type': 'text/csv' },
	);
	expect(imported.status).toBe(409);
	expect(imported.json.message).toMatch(
		new RegExp(
			`^the suppression list is full: it holds its limit of ${MAX_SUPPRESSIONS} entries \\(RUNNER_MAX_SUPPRESSIONS\\).*${room} phones were added, 2 `,
		),
	);
	expect((await call('GET', '/api/suppressions?limit=1')).json.total).toBe(MAX_SUPPRESSIONS);

	const added = await call('POST', '/api/suppressions', { phone: phone(8, 902) });
	expect(added.status).toBe(409);
	expect(added.json).toMatchObject({
		field: 'phone',
		message: expect.stringContaining(`limit of ${MAX_SUPPRESSIONS} entries (RUNNER_MAX_SUPPRESSIONS)`),
	});
	const cli = await runCli(['suppression', 'add', phone(8, 903)], runner.env);
	expect(cli.code).toBe(1);
	expect(cli.stderr + cli.stdout).toContain('RUNNER_MAX_SUPPRESSIONS');
	const stop = await deliver(phone(8, 904), 'STOP', at(400));
	expect(stop.status).toBe(409);
	expect(stop.text).toContain('RUNNER_MAX_SUPPRESSIONS');
	// A phone already listed is no add: re-adding it still answers.
	expect((await call('POST', '/api/suppressions', { phone: fill[0] })).json).toMatchObject({ added: false });

	// With room again, the refused STOP's retry is applied (a refusal is not remembered as applied).
	expect((await call('DELETE', `/api/suppressions/${fill[0]}`)).json.removed).toBe(true);
	expect((await deliver(phone(8, 904), 'STOP', at(400))).status).toBe(200);
	expect(await entryOf(phone(8, 904))).toMatchObject({ source: 'keyword' });
});
