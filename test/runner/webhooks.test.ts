/**
 * Webhooks over the control API with two runner processes (`start` with the API, and a `worker`)
 * against real Redis and the sandbox. Test HTTP receivers count what they were sent and check each
 * signature with convo-contract's verifyDelivery (what the Convo Runner Trigger runs): one event per
 * transition (a campaign that completes or is cancelled, each pause, a reindex run's end), retries
 * with backoff that are logged, DELETE stopping deliveries, and no secret in Redis or the logs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, verifyDelivery, type RunnerEvent } from 'convo-contract';
import { cancel, pauseCampaign } from '../../runner/src/core/campaigns';
import { noteDelivery } from '../../runner/src/webhooks/deliveries';
import { countFailure } from '../../runner/src/webhooks/store';
import { collectionOf, FEED_DIR, feedText, products, range, writeFeed } from './reindexSupport';
import {
	clearFaults,
	dumpKeys,
	expectNoSecret,
	positionalTemplate,
	setFault,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	waitForEventsDelivered,
	waitForFeederTick,
	apiCaller,
} from './support';

const SEND_TEMPLATE = 'POST /api/external/v2/send-template';

jest.setTimeout(240_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_PAUSE_AFTER_FAILURES: '5',
	RUNNER_SOURCE_DIR: FEED_DIR,
});
let base = '';

interface Attempt {
	status: number;
	event: RunnerEvent;
	headers: Record<string, string | string[] | undefined>;
	/** verifyDelivery's verdict with the secret the registration returned. */
	verified: boolean;
}

interface Receiver {
	url: string;
	attempts: Attempt[];
	/** Set once the webhook is registered: the secret its deliveries are checked with. */
	secret: string;
	webhookId: string;
	close(): Promise<void>;
}

/** An HTTP receiver; `answer` decides each attempt's status (default 200). */
async function startReceiver(
	answer: (event: RunnerEvent, earlier: Attempt[]) => Promise<number> | number = () => 200,
): Promise<Receiver> {
	const receiver = { attempts: [] as Attempt[], secret: '', webhookId: '' } as Receiver;
	const server = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', async () => {
			const event = JSON.parse(body) as RunnerEvent;
			const earlier = receiver.attempts.filter((attempt) => attempt.event.id === event.id);
			const status = await answer(event, earlier);
			receiver.attempts.push({
				status,
				event,
				headers: request.headers,
				verified: verifyDelivery(request.headers[SIGNATURE_HEADER], body, receiver.secret).ok,
			});
			response.writeHead(status).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
	receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
	return receiver;
}

const call = apiCaller(() => base, TOKEN);

async function register(receiver: Receiver, events: string[], description?: string) {
	const created = await call('POST', '/api/webhooks', { url: receiver.url, events, description });
	expect(created.status).toBe(201);
	receiver.secret = created.json.secret;
	receiver.webhookId = created.json.id;
	return created.json;
}

const ALL = ['campaign.finished', 'campaign.paused', 'reindex.finished'];
const receivers: Receiver[] = [];
let main: Receiver;
const secrets: string[] = [];

beforeAll(async () => {
	base = await startApi(runner);
	// Both processes send from the first campaign on: the worker is waited for, not hoped to be up in time.
	const worker = runner.spawnWorker();
	await waitFor('the worker to start', async () => worker.output().includes('"msg":"runner started"'), 60_000, 100);
	main = await startReceiver();
	receivers.push(main);
	secrets.push((await register(main, ALL, 'everything')).secret);
});
afterAll(async () => {
	await Promise.all(receivers.map((receiver) => receiver.close()));
});

const settings = () => ({ template_id: positionalTemplate(runner.business).id, from: runner.business.phoneNumbers[0] });
const phonesOf = (n: number, seed: number) =>
	Array.from({ length: n }, (_, i) => `4915${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`);
const rowsOf = (phones: string[]) => phones.map((phone) => ({ phone, 1: 'Ana', 2: 'order' }));
const about = (receiver: Receiver, type: string, subject: string) =>
	receiver.attempts.filter((attempt) => attempt.event.type === type && attempt.event.data.id === subject);
/**
 * Waits until nothing more can arrive, so "exactly one" is proven rather than hoped: every event
 * emitted so far delivered, retries included (waitForEventsDelivered). Before that, one whole feeder
 * tick that began after the event was seen (waitForFeederTick): a transition that wrongly emits again
 * after the one observed (the feeder finding the campaign done once more, an in-flight send settling
 * after a cancel or a pause, a refused job of a stopped campaign, the other process settling its last
 * claim) does so within a tick or a send's round trip, and is then in the outbox the drain waits on.
 * A tick, not a fixed second: on a loaded machine a second can pass without one.
 */
async function settle(): Promise<void> {
	await waitForFeederTick(runner.context);
	await waitForEventsDelivered(runner.context);
}

async function campaign(phones: string[], extra: Record<string, unknown> = {}): Promise<string> {
	const created = await call('POST', '/api/campaigns', {
		...settings(),
		rate: 100,
		recipients: rowsOf(phones),
		...extra,
	});
	expect(created.status).toBe(201);
	return created.json.id;
}

/** Pino lines of both runner processes, parsed. */
function logLines(): Array<Record<string, unknown>> {
	return runner.processes.flatMap((process) =>
		process
			.output()
			.split('\n')
			.filter((line) => line.startsWith('{'))
			.map((line) => JSON.parse(line) as Record<string, unknown>),
	);
}

test('registration: the secret is in the create answer only; list and get never show it; bad input names the field; unknown ids are 404', async () => {
	const listed = await call('GET', '/api/webhooks');
	expect(listed.json.webhooks).toEqual([
		{
			id: main.webhookId,
			url: main.url,
			events: ALL,
			description: 'everything',
			created_at: expect.any(String),
			failures: 0,
		},
	]);
	const got = await call('GET', `/api/webhooks/${main.webhookId}`);
	expect({ status: got.status, json: got.json }).toEqual({ status: 200, json: listed.json.webhooks[0] });
	expect(main.secret).toMatch(/^[0-9a-f]{64}$/);
	expect(
		(await call('POST', '/api/webhooks', { url: 'ftp://example.com/x', events: ['campaign.finished'] })).json,
	).toMatchObject({ status: 400, field: 'url' });
	expect((await call('POST', '/api/webhooks', { url: main.url, events: [] })).json).toMatchObject({
		status: 400,
		field: 'events',
	});
	expect((await call('POST', '/api/webhooks', { url: main.url, events: ['campaign.started'] })).json).toMatchObject({
		status: 400,
		field: 'events.0',
	});
	expect((await call('GET', '/api/webhooks/wnosuch')).status).toBe(404);
	expect((await call('DELETE', '/api/webhooks/wnosuch')).json).toEqual({
		status: 404,
		code: 'not_found',
		message: 'No webhook with id wnosuch',
	});
});

test('a campaign that completes gives exactly one campaign.finished, signed, with its final counts; two processes sent it', async () => {
	const phones = phonesOf(300, 1);
	const id = await campaign(phones);
	const delivered = await waitFor(
		'campaign.finished to arrive',
		async () => about(main, 'campaign.finished', id)[0],
		120_000,
		200,
	);
	await settle();
	expect(about(main, 'campaign.finished', id)).toHaveLength(1);
	expect(delivered.verified).toBe(true);
	expect(delivered.status).toBe(200);
	expect(delivered.headers[EVENT_HEADER]).toBe('campaign.finished');
	expect(delivered.headers[DELIVERY_HEADER]).toBe(`${delivered.event.id}-${main.webhookId}`);
	const sends = (await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to));
	expect(sends).toHaveLength(300);
	expect(delivered.event).toMatchObject({
		type: 'campaign.finished',
		data: { id, state: 'completed', counts: { sent: 300, pending: 0, claimed: 0 }, total: 300 },
	});
	expect(Date.parse(delivered.event.created_at)).toBeGreaterThan(0);
	// Two runner processes were sending: whichever settled the last recipient completed it, once.
	const senders = new Set(
		logLines()
			.filter((line) => line.msg === 'runner started')
			.map((line) => line.pid),
	);
	expect(senders.size).toBe(2);
});

test('a cancel made twice at once, by the API and the core library, gives one campaign.finished with the final counts', async () => {
	const phones = phonesOf(400, 2);
	const id = await campaign(phones, { rate: 20 });
	await waitFor(
		'some sends',
		async () => (await templateSends(runner.sandbox)).some((message) => phones.includes(message.to)),
		60_000,
	);
	const answers = await Promise.allSettled([call('POST', `/api/campaigns/${id}/cancel`), cancel(runner.context, id)]);
	expect(answers.map((answer) => answer.status)).toContain('fulfilled');
	await waitFor('campaign.finished to arrive', async () => about(main, 'campaign.finished', id)[0], 60_000);
	await settle();
	const finished = about(main, 'campaign.finished', id);
	expect(finished).toHaveLength(1);
	const data = finished[0].event.data as { state: string; counts: Record<string, number> };
	expect(data.state).toBe('cancelled');
	expect(data.counts.pending).toBe(0);
	expect(data.counts.cancelled).toBeGreaterThan(0);
	expect(data.counts.cancelled + data.counts.sent + data.counts.claimed).toBe(400);
});

test('each pause gives one campaign.paused: an operator pause sent 20 times at once, a second pause after a resume, and a campaign that pauses itself', async () => {
	const id = await campaign(phonesOf(600, 3), { rate: 10 });
	// Ten pauses at once through the API and ten through the core library: the state changes once.
	const pauses = await Promise.all([
		...Array.from({ length: 10 }, () => call('POST', `/api/campaigns/${id}/pause`)),
		...Array.from({ length: 10 }, () => pauseCampaign(runner.context, id)),
	]);
	expect(pauses.map((answer) => (typeof answer === 'string' ? answer : answer.json.state))).toEqual(
		Array(20).fill('paused'),
	);
	await waitFor('campaign.paused', async () => about(main, 'campaign.paused', id)[0], 60_000);
	expect((await call('POST', `/api/campaigns/${id}/resume`)).json.state).toBe('running');
	await call('POST', `/api/campaigns/${id}/pause`);
	await waitFor('a second campaign.paused', async () => about(main, 'campaign.paused', id)[1], 60_000);
	await call('POST', `/api/campaigns/${id}/cancel`);
	await waitFor('campaign.finished', async () => about(main, 'campaign.finished', id)[0], 60_000);
	await settle();
	const paused = about(main, 'campaign.paused', id);
	expect(paused).toHaveLength(2);
	expect(new Set(paused.map((attempt) => attempt.event.id)).size).toBe(2);
	expect(
		paused.every(
			(attempt) =>
				attempt.verified &&
				(attempt.event.data as { state: string; last_error: string }).last_error === 'paused by the operator',
		),
	).toBe(true);
	expect(about(main, 'campaign.finished', id)).toHaveLength(1);

	// No value for variable "2": every send is refused, and after 5 in a row the campaign pauses itself.
	const failing = await call('POST', '/api/campaigns', {
		...settings(),
		rate: 50,
		recipients: phonesOf(40, 4).map((phone) => ({ phone, 1: 'Ana' })),
	});
	const selfPaused = await waitFor(
		'campaign.paused',
		async () => about(main, 'campaign.paused', failing.json.id)[0],
		60_000,
	);
	await settle();
	expect(about(main, 'campaign.paused', failing.json.id)).toHaveLength(1);
	expect(selfPaused.event.data).toMatchObject({
		state: 'paused',
		last_error: expect.stringMatching(/^paused itself after 5 failed recipients in a row/),
	});
	await call('POST', `/api/campaigns/${failing.json.id}/cancel`);
});

test("a cancel while sends are in flight: campaign.finished comes once they settled, its counts the campaign's final ones (nothing claimed or pending)", async () => {
	const phones = phonesOf(60, 50);
	// Each send is answered 1.5 s after it arrives: at the cancel several are on their way.
	await setFault(runner.sandbox, { endpoint: SEND_TEMPLATE, latencyMs: 1500 });
	try {
		const id = await campaign(phones, { rate: 20 });
		await waitFor(
			'sends in flight',
			async () => ((await call('GET', `/api/campaigns/${id}`)).json.counts.claimed as number) > 0,
			60_000,
			50,
		);
		expect((await call('POST', `/api/campaigns/${id}/cancel`)).status).toBe(200);
		await waitFor('campaign.finished to arrive', async () => about(main, 'campaign.finished', id)[0], 60_000);
		await settle();
		const finished = about(main, 'campaign.finished', id);
		expect(finished).toHaveLength(1);
		const data = finished[0].event.data as { state: string; counts: Record<string, number> };
		const final = (await call('GET', `/api/campaigns/${id}`)).json as { state: string; counts: Record<string, number> };
		expect(data.state).toBe('cancelled');
		expect(data.counts).toEqual(final.counts);
		expect(data.counts).toMatchObject({ claimed: 0, pending: 0 });
		expect(data.counts.sent).toBeGreaterThan(0);
		// What the event says was sent is what the service received, each once.
		const sends = (await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to));
		expect(new Set(sends.map((message) => message.to)).size).toBe(sends.length);
		expect(data.counts.sent).toBe(sends.length);
	} finally {
		await clearFaults(runner.sandbox);
	}
});

test('a reindex run that ends gives one reindex.finished with the run status', async () => {
	const source = writeFeed(feedText(products(range(0, 50)), 'ndjson'), 'feed.ndjson');
	const created = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		source,
		id_field: 'sku',
		rate: 200,
	});
	expect(created.status).toBe(201);
	const id = created.json.id as string;
	const delivered = await waitFor('reindex.finished', async () => about(main, 'reindex.finished', id)[0], 60_000);
	await settle();
	expect(about(main, 'reindex.finished', id)).toHaveLength(1);
	expect(delivered.verified).toBe(true);
	expect(delivered.event.data).toEqual({
		id,
		state: 'completed',
		counts: expect.objectContaining({ read: 50, created: 50, failed: 0 }),
		rate: 0,
		eta_seconds: 0,
		last_error: null,
	});
});

test('a receiver that fails the first 2 attempts gets the event on the 3rd, after backoff; every attempt is logged', async () => {
	const flaky = await startReceiver((_event, earlier) => (earlier.length < 2 ? 500 : 204));
	receivers.push(flaky);
	secrets.push((await register(flaky, ['campaign.finished'])).secret);
	const id = await campaign(phonesOf(3, 5));
	await waitFor('the third attempt', async () => about(flaky, 'campaign.finished', id)[2], 60_000);
	await settle();
	const attempts = about(flaky, 'campaign.finished', id);
	expect(attempts.map((attempt) => attempt.status)).toEqual([500, 500, 204]);
	expect(attempts.every((attempt) => attempt.verified)).toBe(true);
	expect(new Set(attempts.map((attempt) => attempt.event.id)).size).toBe(1);
	expect(new Set(attempts.map((attempt) => attempt.headers[DELIVERY_HEADER])).size).toBe(1);
	// The other webhook got the same event once.
	expect(about(main, 'campaign.finished', id).map((attempt) => attempt.event.id)).toEqual([attempts[0].event.id]);

	const eventId = attempts[0].event.id;
	// Attempts may be made by either process: their logs are merged in time order.
	const logged = logLines()
		.filter((line) => line.webhook === flaky.webhookId && line.event === eventId)
		.sort((a, b) => Number(a.time) - Number(b.time));
	expect(logged.map((line) => [line.attempt, line.status, line.msg])).toEqual([
		[1, 500, 'webhook delivery failed; it will be tried again'],
		[2, 500, 'webhook delivery failed; it will be tried again'],
		[3, 204, 'webhook delivered'],
	]);
	const times = logged.map((line) => Number(line.time));
	// Exponential backoff: about 1 s, then about 2 s.
	expect(times[1] - times[0]).toBeGreaterThanOrEqual(900);
	expect(times[2] - times[1]).toBeGreaterThanOrEqual(1800);

	// Each attempt is noted in the webhook's recent deliveries, newest first, with the receiver's status.
	const noted = (await call('GET', `/api/webhooks/${flaky.webhookId}/deliveries`)).json.deliveries;
	const attemptsInAll = runner.context.config.RUNNER_WEBHOOK_ATTEMPTS;
	expect(noted).toEqual(
		[
			[1, 'failed', 500, 'the receiver answered 500'],
			[2, 'failed', 500, 'the receiver answered 500'],
			[3, 'delivered', 204, null],
		]
			.reverse()
			.map(([attempt, outcome, status, error]) => ({
				id: `${eventId}-${flaky.webhookId}`,
				event_id: eventId,
				type: 'campaign.finished',
				at: expect.any(String),
				attempt,
				attempts: attemptsInAll,
				outcome,
				status,
				error,
				duration_ms: expect.any(Number),
			})),
	);
	// The delivery that got through counts the failures in a row from 0 again.
	expect((await call('GET', `/api/webhooks/${flaky.webhookId}`)).json.failures).toBe(0);
});

test('DELETE stops deliveries, retries already queued included', async () => {
	const flaky = receivers[1];
	expect((await call('DELETE', `/api/webhooks/${flaky.webhookId}`)).status).toBe(204);
	expect((await call('GET', `/api/webhooks/${flaky.webhookId}`)).status).toBe(404);
	expect((await call('DELETE', `/api/webhooks/${flaky.webhookId}`)).status).toBe(404);
	const before = flaky.attempts.length;

	// This receiver removes its own webhook at the first attempt and refuses it: the retry must not come.
	const leaving: Receiver = await startReceiver(async () => {
		await call('DELETE', `/api/webhooks/${leaving.webhookId}`);
		return 503;
	});
	receivers.push(leaving);
	secrets.push((await register(leaving, ['campaign.finished'])).secret);

	const id = await campaign(phonesOf(2, 6));
	await waitFor('the remaining webhook to get it', async () => about(main, 'campaign.finished', id)[0], 60_000);
	await waitFor('the leaving receiver to be tried', async () => about(leaving, 'campaign.finished', id)[0], 30_000);
	// Its retry (1 s of backoff) is a delayed job until it is made: settle() waits for it to be dropped.
	await settle();
	expect(flaky.attempts.length).toBe(before);
	expect(about(leaving, 'campaign.finished', id)).toHaveLength(1);
	// Their recent deliveries went with them: the attempt that ended after the removal noted nothing.
	const { redis, keys } = runner.context;
	expect(
		await redis.exists(keys.webhooks.deliveries(flaky.webhookId), keys.webhooks.deliveries(leaving.webhookId)),
	).toBe(0);
	expect((await call('GET', `/api/webhooks/${flaky.webhookId}/deliveries`)).status).toBe(404);
	expect(
		logLines().some(
			(line) => line.webhook === leaving.webhookId && line.msg === 'webhook delivery dropped: the webhook was removed',
		),
	).toBe(true);
	expect((await call('GET', '/api/webhooks')).json.webhooks.map((webhook: { id: string }) => webhook.id)).toEqual([
		main.webhookId,
	]);
});

test('an event handed to the delivery queue twice (a dispatcher that died before trimming the outbox) is delivered once per webhook', async () => {
	const { redis, keys } = runner.context;
	const id = await campaign(phonesOf(1, 7));
	await waitFor('the campaign to complete', async () => about(main, 'campaign.finished', id)[0], 60_000);
	const { from } = settings();
	const flat = Object.entries(await redis.hgetall(keys.campaign(from, id))).flat();
	const entry = JSON.stringify({
		id: `ev-${id}-replayed`,
		type: 'campaign.finished',
		at: String(Date.now()),
		hash: flat,
	});
	await redis.rpush(keys.outbox(from), entry, entry);
	await waitFor(
		'the copy to be delivered',
		async () => main.attempts.find((attempt) => attempt.event.id === `ev-${id}-replayed`),
		30_000,
	);
	await settle();
	expect(main.attempts.filter((attempt) => attempt.event.id === `ev-${id}-replayed`)).toHaveLength(1);
	expect(await redis.llen(keys.outbox(from))).toBe(0);
});

test('a test event reaches the webhook whatever its events, a disabled one too, uncounted, one at a time; its recent deliveries keep the last 20', async () => {
	let release = () => undefined as void;
	const held = new Promise<void>((resolve) => (release = resolve));
	let arrived = false;
	const probed = await startReceiver(async () => {
		arrived = true;
		await held;
		return 200;
	});
	receivers.push(probed);
	secrets.push((await register(probed, ['campaign.paused'])).secret);
	const id = probed.webhookId;
	const first = await call('POST', `/api/webhooks/${id}/test`);
	expect(first).toMatchObject({ status: 202, json: { id, delivery_id: expect.any(String), queued: true } });
	// While it is in flight, another press adds nothing.
	await waitFor('the test event to reach the receiver', async () => arrived, 30_000);
	expect((await call('POST', `/api/webhooks/${id}/test`)).json).toEqual({
		id,
		delivery_id: first.json.delivery_id,
		queued: false,
	});
	release();
	await waitForEventsDelivered(runner.context);
	expect(probed.attempts).toHaveLength(1);
	const [test] = probed.attempts;
	expect(test).toMatchObject({ status: 200, verified: true, event: { type: 'webhook.test', data: { webhook: id } } });
	expect(test.headers[EVENT_HEADER]).toBe('webhook.test');
	expect(test.headers[DELIVERY_HEADER]).toBe(first.json.delivery_id);
	expect((await call('GET', `/api/webhooks/${id}/deliveries`)).json.deliveries).toEqual([
		{
			id: first.json.delivery_id,
			event_id: test.event.id,
			type: 'webhook.test',
			at: expect.any(String),
			attempt: 1,
			attempts: 1,
			outcome: 'delivered',
			status: 200,
			error: null,
			duration_ms: expect.any(Number),
		},
	]);

	// Disabled: a test still reaches it, and neither counts nor enables it; a real event is skipped, and noted so.
	for (let i = 0; i < runner.context.config.RUNNER_WEBHOOK_DISABLE_AFTER; i++) await countFailure(runner.context, id);
	const disabled = (await call('GET', `/api/webhooks/${id}`)).json;
	expect(disabled).toMatchObject({
		disabled_at: expect.any(String),
		failures: runner.context.config.RUNNER_WEBHOOK_DISABLE_AFTER,
	});
	expect((await call('POST', `/api/webhooks/${id}/test`)).json.queued).toBe(true);
	await waitForEventsDelivered(runner.context);
	expect(probed.attempts.map((attempt) => [attempt.event.type, attempt.status])).toEqual([
		['webhook.test', 200],
		['webhook.test', 200],
	]);
	expect((await call('GET', `/api/webhooks/${id}`)).json).toEqual(disabled);
	const paused = await campaign(phonesOf(400, 8), { rate: 1 });
	expect((await call('POST', `/api/campaigns/${paused}/pause`)).status).toBe(200);
	await waitFor('campaign.paused to reach the other webhook', async () => about(main, 'campaign.paused', paused)[0]);
	await settle();
	expect(probed.attempts).toHaveLength(2);
	const notes = (await call('GET', `/api/webhooks/${id}/deliveries`)).json.deliveries;
	expect(notes).toHaveLength(3);
	expect(notes[0]).toMatchObject({
		type: 'campaign.paused',
		attempt: 0,
		outcome: 'skipped',
		status: null,
		error: 'the webhook is disabled',
		duration_ms: null,
	});
	expect(await call('POST', `/api/campaigns/${paused}/cancel`)).toMatchObject({ status: 200 });
	expect((await call('POST', `/api/webhooks/${id}/enable`)).json.failures).toBe(0);

	// The list keeps the last 20 attempts, whatever the traffic.
	for (let i = 0; i < 25; i++)
		await noteDelivery(runner.context, id, {
			id: `ev-cap-${i}-${id}`,
			event_id: `ev-cap-${i}`,
			type: 'campaign.paused',
			at: new Date().toISOString(),
			attempt: 1,
			attempts: 1,
			outcome: 'failed',
			status: 500,
			error: 'x'.repeat(1000),
			duration_ms: 1,
		});
	const kept = (await call('GET', `/api/webhooks/${id}/deliveries`)).json.deliveries;
	expect(kept.map((note: { event_id: string }) => note.event_id)).toEqual(
		Array.from({ length: 20 }, (_, i) => `ev-cap-${24 - i}`),
	);
	expect(kept[0].error).toHaveLength(300);
	expect(await runner.context.redis.llen(runner.context.keys.webhooks.deliveries(id))).toBe(20);
	expect((await call('POST', '/api/webhooks/wnosuch/test')).status).toBe(404);
	expect((await call('GET', '/api/webhooks/wnosuch/deliveries')).status).toBe(404);
});

test('no webhook secret (nor the token) is in any Redis key or value, or in any log line', async () => {
	expect(secrets).toHaveLength(4);
	const redis = await dumpKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string);
	expect(redis).toContain(main.webhookId);
	expect(redis).toContain('campaign.finished');
	const logs = runner.processes.map((process) => process.output()).join('\n');
	expect(logs).toContain('webhook delivered');
	for (const [where, text] of Object.entries({ redis, logs })) {
		expect({ where, secrets: secrets.filter((secret) => text.includes(secret)), token: text.includes(TOKEN) }).toEqual({
			where,
			secrets: [],
			token: false,
		});
	}
	expectNoSecret(runner.business, { redis, logs });
});
