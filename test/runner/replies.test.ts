/**
 * Replies (#22): the runner's events endpoint registered at the sandbox as an operator registers it
 * in the dashboard (event type message_created, the URL, a custom header), inbound messages made by
 * the sandbox and delivered to it, and each reply attributed to the campaign that last messaged the
 * phone within the reply period: one `convo-runner start` (API and workers), real Redis, the sandbox.
 */
import { EVENTS_PATH } from '../../runner/src/http/eventRoutes';
import { repliedAt, repliedCount } from '../../runner/src/tracking/replies';
import {
	clearFaults,
	dumpKeys,
	expectNoSecret,
	positionalTemplate,
	scanKeys,
	setFault,
	startApi,
	useRunnerUnderTest,
	waitFor,
} from './support';

jest.setTimeout(240_000);

const TOKEN = 'test-token-0123456789abcdef';
const HEADER = 'X-Convo-Events';
const SECRET = 'events-secret-5f1c0e9a7d3b2468';
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_EVENTS_HEADER_NAME: HEADER,
	RUNNER_EVENTS_HEADER_VALUE: SECRET,
	LOG_LEVEL: 'debug',
});
let base = '';

const phoneOf = (seed: number, i: number) => `4917${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;

async function call(
	method: string,
	path: string,
	body?: unknown,
	headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
) {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	return { status: response.status, json: (text ? JSON.parse(text) : undefined) as any };
}

async function sandbox(method: string, path: string, body?: unknown) {
	const response = await fetch(`${runner.sandbox.baseUrl}/__sandbox${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	expect(response.status).toBeLessThan(300);
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	return (await response.json()) as any;
}

interface Delivery {
	webhookId: string;
	statusCode?: number;
	error?: string;
}
const deliveries = async (): Promise<Delivery[]> =>
	sandbox('GET', `/webhooks/deliveries?business=${runner.business.id}`);

/**
 * A campaign of `phones` (inline rows, index i = phones[i]); `at`: scheduled, else waited for until
 * every recipient is settled. `template`: another template id (one the service refuses: every send fails).
 */
async function campaign(
	phones: string[],
	at?: string,
	template = positionalTemplate(runner.business).id,
): Promise<{ id: string; from: string }> {
	const created = await call('POST', '/api/campaigns', {
		template_id: template,
		from: runner.business.phoneNumbers[0],
		rate: 50,
		...(at ? { at } : {}),
		recipients: phones.map((phone) => ({ phone, 1: 'a', 2: 'b' })),
	});
	expect(created.status).toBe(201);
	const id = created.json.id as string;
	if (!at)
		await waitFor(
			`campaign ${id} to settle`,
			async () => {
				const { counts } = (await call('GET', `/api/campaigns/${id}`)).json;
				return counts.pending + counts.claimed === 0;
			},
			60_000,
		);
	return { id, from: runner.business.phoneNumbers[0] };
}

/** The customer `phone` writes to the business; resolves once every registered endpoint has answered that delivery. Returns the message's time. */
async function reply(phone: string, text = 'yes please'): Promise<number> {
	const before = (await deliveries()).length;
	const registrations = ((await sandbox('GET', '/webhooks')) as unknown[]).length;
	const { message } = await sandbox('POST', '/inbound', { business: runner.business.id, from: phone, text });
	await waitFor(
		'the delivery to be answered',
		async () => (await deliveries()).length >= before + registrations,
		20_000,
		50,
	);
	return Date.parse(message.createdAt);
}

/** Every reply hash of every campaign: key -> its fields. */
async function allReplies(): Promise<Record<string, Record<string, string>>> {
	const keys = (await scanKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string))
		.filter((key) => key.endsWith(':replies'))
		.sort();
	return Object.fromEntries(await Promise.all(keys.map(async (key) => [key, await runner.context.redis.hgetall(key)])));
}

const body = (payload: Record<string, unknown>) => ({
	event: 'message_created',
	payload: {
		to: runner.business.phoneNumbers[0],
		status: 'received',
		text: 'hi',
		channel: 'whatsapp',
		createdAt: new Date().toISOString(),
		...payload,
	},
});
const withHeader = { [HEADER]: SECRET };

let registration = '';
beforeAll(async () => {
	base = await startApi(runner);
	registration = (
		await sandbox('POST', '/webhooks', {
			business: runner.business.id,
			url: `${base}${EVENTS_PATH}`,
			method: 'POST',
			headers: withHeader,
		})
	).id;
});

test('a reply from a recipient of a sent campaign is attributed to it, once, at the time of its first reply', async () => {
	const phones = [phoneOf(1, 0), phoneOf(1, 1), phoneOf(1, 2)];
	const sent = await campaign(phones);
	const at = await reply(phones[1]);
	const answered = (await deliveries()).filter((delivery) => delivery.webhookId === registration);
	expect(answered.at(-1)?.statusCode).toBe(200);
	expect(await repliedCount(runner.context, sent)).toBe(1);
	expect(await repliedAt(runner.context, sent, [0, 1, 2])).toEqual([undefined, at, undefined]);
	// A second reply of the same recipient counts once and keeps the first time.
	await reply(phones[1], 'and another thing');
	expect(await repliedCount(runner.context, sent)).toBe(1);
	expect(await repliedAt(runner.context, sent, [1])).toEqual([at]);
	// Only the time is kept: the reply's text is nowhere in Redis.
	expect(await dumpKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string)).not.toContain('and another thing');
});

test('with two campaigns messaging the same phone, the later one gets the reply', async () => {
	const phone = phoneOf(2, 0);
	const earlier = await campaign([phoneOf(2, 1), phone]);
	const later = await campaign([phone]);
	await reply(phone);
	expect([await repliedCount(runner.context, earlier), await repliedCount(runner.context, later)]).toEqual([0, 1]);
	expect((await repliedAt(runner.context, later, [0]))[0]).toEqual(expect.any(Number));
});

test('a recipient whose message is not sent yet does not count; a phone never messaged is attributed to none', async () => {
	const phone = phoneOf(3, 0);
	const sent = await campaign([phone]);
	// A later campaign whose send to the phone failed (the service refused its template): tried, not sent.
	const failed = await campaign([phone], undefined, '00000000-0000-4000-8000-000000000000');
	const [record] = await runner.context.ledger.read(failed.id, 0, 1);
	expect({ outcome: record?.outcome, tried: (record?.lastAttemptAt ?? 0) > 0 }).toEqual({
		outcome: expect.not.stringMatching(/^sent$/),
		tried: true,
	});
	const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
	const waiting = await campaign([phone, phoneOf(3, 1)], tomorrow);
	expect((await call('GET', `/api/campaigns/${waiting.id}`)).json.state).toBe('scheduled');
	await reply(phone);
	await reply(phoneOf(3, 1));
	expect([
		await repliedCount(runner.context, sent),
		await repliedCount(runner.context, failed),
		await repliedCount(runner.context, waiting),
	]).toEqual([1, 0, 0]);

	const stranger = phoneOf(3, 99);
	const before = await allReplies();
	expect(Object.keys(before).length).toBeGreaterThan(0);
	await reply(stranger);
	expect((await deliveries()).at(-1)?.statusCode).toBe(200);
	expect(await allReplies()).toEqual(before);
	await call('POST', `/api/campaigns/${waiting.id}/cancel`);
});

test('a missing or wrong header gets 401 and records nothing; a sent echo is acknowledged and ignored; a bad body is a 400 naming the field', async () => {
	const phone = phoneOf(4, 0);
	const sent = await campaign([phone]);
	// A registration with the wrong value: the sandbox logs the runner's 401.
	const wrong = (
		await sandbox('POST', '/webhooks', {
			business: runner.business.id,
			url: `${base}${EVENTS_PATH}`,
			method: 'PUT',
			headers: { [HEADER]: `${SECRET}x` },
		})
	).id;
	await reply(phone);
	const latest = await deliveries();
	expect(latest.filter((delivery) => delivery.webhookId === wrong).map((delivery) => delivery.statusCode)).toEqual([
		401,
	]);
	await sandbox('DELETE', `/webhooks/${wrong}`);
	expect(await repliedCount(runner.context, sent)).toBe(1);

	const other = phoneOf(4, 1);
	const target = await campaign([other]);
	for (const headers of [
		{},
		{ [HEADER]: 'nope' },
		{ authorization: `Bearer ${TOKEN}` },
		{ [HEADER.toLowerCase()]: SECRET.slice(0, -1) },
	] as Array<Record<string, string>>) {
		for (const method of ['POST', 'PUT']) {
			const answer = await call(method, EVENTS_PATH, body({ from: other }), headers);
			expect({ method, headers: Object.keys(headers), status: answer.status, json: answer.json }).toEqual({
				method,
				headers: Object.keys(headers),
				status: 401,
				json: { status: 401, code: 'unauthorized', message: 'missing or wrong events header' },
			});
		}
	}
	expect(await repliedCount(runner.context, target)).toBe(0);

	// The runner's own sends come back as status sent: acknowledged, nothing recorded.
	for (const method of ['POST', 'PUT'])
		expect(
			await call(
				method,
				EVENTS_PATH,
				body({ from: runner.business.phoneNumbers[0], to: other, status: 'sent' }),
				withHeader,
			),
		).toEqual({ status: 200, json: { received: true } });
	expect(await call('PUT', EVENTS_PATH, body({ from: other, status: 'sent' }), withHeader)).toEqual({
		status: 200,
		json: { received: true },
	});
	expect(await repliedCount(runner.context, target)).toBe(0);
	// PUT as well as POST (SPEC 6): a received one is a reply.
	expect(await call('PUT', EVENTS_PATH, body({ from: `+${other}` }), withHeader)).toEqual({
		status: 200,
		json: { received: true },
	});
	expect(await repliedCount(runner.context, target)).toBe(1);

	const bad = await call('POST', EVENTS_PATH, body({ from: other, status: 'delivered' }), withHeader);
	expect(bad.status).toBe(400);
	expect(bad.json).toMatchObject({ field: 'payload.status' });
	expect(
		(await call('POST', EVENTS_PATH, body({ from: other, createdAt: 'yesterday' }), withHeader)).json,
	).toMatchObject({ status: 400, field: 'payload.createdAt' });
	expect((await call('POST', EVENTS_PATH, { event: 'message_updated', payload: {} }, withHeader)).json).toMatchObject({
		status: 400,
		field: 'event',
	});
	// Size-limited: a body far past any message is refused unread.
	expect((await call('POST', EVENTS_PATH, body({ from: other, text: 'x'.repeat(100_000) }), withHeader)).status).toBe(
		413,
	);
});

test('a runner without the header settings answers 404 on the endpoint', async () => {
	const off = await startApi(runner, { RUNNER_EVENTS_HEADER_NAME: undefined, RUNNER_EVENTS_HEADER_VALUE: undefined });
	const response = await fetch(`${off}${EVENTS_PATH}`, {
		method: 'POST',
		headers: { ...withHeader, 'content-type': 'application/json' },
		body: JSON.stringify(body({ from: phoneOf(5, 0) })),
	});
	expect(response.status).toBe(404);
	expect(((await response.json()) as { message: string }).message).toBe(
		'the events endpoint is not configured: set RUNNER_EVENTS_HEADER_NAME and RUNNER_EVENTS_HEADER_VALUE',
	);
});

test('a reply that comes while the send to its phone is in flight waits for that send and counts for it', async () => {
	const phone = phoneOf(7, 0);
	const from = runner.business.phoneNumbers[0];
	// The service answers the send 2.5 s after it came: the reply comes in between.
	await setFault(runner.sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs: 2500 });
	try {
		const created = await call('POST', '/api/campaigns', {
			template_id: positionalTemplate(runner.business).id,
			from,
			rate: 50,
			recipients: [{ phone, 1: 'a', 2: 'b' }],
		});
		expect(created.status).toBe(201);
		const sent = { id: created.json.id as string, from };
		const counts = async () => (await call('GET', `/api/campaigns/${sent.id}`)).json.counts;
		await waitFor('the send to be in flight', async () => (await counts()).claimed === 1, 20_000, 25);
		const at = await reply(phone);
		// The delivery was answered once the send was: sent, and the reply counts for it.
		expect((await counts()).sent).toBe(1);
		expect((await deliveries()).at(-1)?.statusCode).toBe(200);
		expect(await repliedCount(runner.context, sent)).toBe(1);
		expect(await repliedAt(runner.context, sent, [0])).toEqual([at]);
	} finally {
		await clearFaults(runner.sandbox);
	}
});

test('a reply after the reply period is attributed to none; the secret is never in the logs or Redis', async () => {
	const phone = phoneOf(6, 0);
	const sent = await campaign([phone]);
	// The service's clock moves 73 h on (the default reply period is 72 h): the reply is stamped then.
	await sandbox('POST', '/clock', { advanceMs: 73 * 3_600_000 });
	await reply(phone);
	expect((await deliveries()).at(-1)?.statusCode).toBe(200);
	expect(await repliedCount(runner.context, sent)).toBe(0);

	const logs = runner.processes.map((process) => process.output()).join('\n');
	// The refused attempts were logged (by header name), the value never.
	expect(logs).toContain(`missing or wrong ${HEADER} header on the events endpoint`);
	expect(logs).toContain('reply attributed');
	const redis = await dumpKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string);
	for (const [where, text] of Object.entries({ logs, redis }))
		expect({ where, leaks: text.includes(SECRET) }).toEqual({ where, leaks: false });
	expectNoSecret(runner.business, { logs, redis });
});
