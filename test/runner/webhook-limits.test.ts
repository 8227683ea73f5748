// @serial: measures how soon a healthy receiver gets its events beside hanging ones
/**
 * Webhook receivers kept apart and bounded, against one `convo-runner start` (real Redis, the
 * sandbox) and HTTP receivers of the test's own, which record each arrival and its time: 25
 * receivers that never answer do not hold up a healthy one's events; a receiver that keeps failing
 * is disabled (logged, shown by GET, nothing more sent to it) until enabled again; registrations
 * are capped (counted in Redis) with their URL length, and the list comes a page at a time.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { RunnerEvent } from 'convo-contract';
import {
	positionalTemplate,
	scanKeys,
	startApi,
	useRunnerUnderTest,
	waitFor,
	waitForEventsDelivered,
	apiCaller,
} from './support';

jest.setTimeout(240_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_MAX_WEBHOOKS: '40',
	RUNNER_WEBHOOK_DISABLE_AFTER: '3',
	RUNNER_WEBHOOK_ATTEMPTS: '8',
});
let base = '';

interface Arrival {
	event: RunnerEvent;
	at: number;
}

interface Receiver {
	url: string;
	arrivals: Arrival[];
	id: string;
	close(): Promise<void>;
}

/** A receiver answering `status()`, or never answering when it gives 0. */
async function startReceiver(status: () => number = () => 200): Promise<Receiver> {
	const receiver = { arrivals: [] as Arrival[], id: '' } as Receiver;
	const held: ServerResponse[] = [];
	const server = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', () => {
			receiver.arrivals.push({ event: JSON.parse(body) as RunnerEvent, at: Date.now() });
			const answer = status();
			if (answer === 0) held.push(response);
			else response.writeHead(answer).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
	receiver.close = () =>
		new Promise((resolve) => {
			server.closeAllConnections();
			server.close(() => resolve());
		});
	return receiver;
}

const call = apiCaller(() => base, TOKEN);

const receivers: Receiver[] = [];
async function registered(status?: () => number): Promise<Receiver> {
	const receiver = await startReceiver(status);
	receivers.push(receiver);
	const created = await call('POST', '/api/webhooks', { url: receiver.url, events: ['campaign.finished'] });
	expect(created.status).toBe(201);
	receiver.id = created.json.id;
	return receiver;
}

let seed = 0;
/** A campaign of one recipient: it completes within a second or two, which is a campaign.finished. */
async function finishedCampaign(): Promise<string> {
	const phone = `4918${String(++seed).padStart(9, '0')}`;
	const created = await call('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		recipients: [{ phone, 1: 'Ana', 2: 'x' }],
	});
	expect(created.status).toBe(201);
	return created.json.id;
}

const arrivalOf = (receiver: Receiver, campaign: string) =>
	receiver.arrivals.find((arrival) => arrival.event.data.id === campaign);
function logLines(): Array<Record<string, unknown>> {
	return runner.processes.flatMap((process) =>
		process
			.output()
			.split('\n')
			.filter((line) => line.startsWith('{'))
			.map((line) => JSON.parse(line) as Record<string, unknown>),
	);
}

beforeAll(async () => {
	base = await startApi(runner);
});
afterAll(async () => {
	await Promise.all(receivers.map((receiver) => receiver.close()));
});

test('25 receivers that never answer do not hold up a healthy one: each of 3 events reaches it within 5 s of the event', async () => {
	const hanging: Receiver[] = [];
	for (let i = 0; i < 25; i++) hanging.push(await registered(() => 0));
	// Registered last: its deliveries are queued behind the hanging ones'.
	const healthy = await registered();
	const campaigns = await Promise.all([finishedCampaign(), finishedCampaign(), finishedCampaign()]);
	const arrivals = await waitFor(
		'the healthy receiver to get all 3 events',
		async () => {
			const found = campaigns.map((campaign) => arrivalOf(healthy, campaign));
			return found.every(Boolean) ? (found as Arrival[]) : undefined;
		},
		120_000,
		100,
	);
	const delays = arrivals.map((arrival) => arrival.at - Date.parse(arrival.event.created_at));
	console.log(
		`healthy receiver: events arrived ${delays.join(', ')} ms after they happened; hanging receivers were tried ${hanging.reduce((sum, receiver) => sum + receiver.arrivals.length, 0)} times meanwhile`,
	);
	for (const delay of delays) expect(delay).toBeLessThan(5000);
	// The hanging receivers were tried too (their first event at least), not skipped.
	await waitFor(
		'every hanging receiver to be tried',
		async () => hanging.every((receiver) => receiver.arrivals.length > 0),
		30_000,
	);
	// They leave: removing them frees their places for the next tests.
	for (const receiver of hanging) expect((await call('DELETE', `/api/webhooks/${receiver.id}`)).status).toBe(204);
});

test('a receiver that fails 3 attempts in a row (RUNNER_WEBHOOK_DISABLE_AFTER=3) is disabled: logged, shown by GET, sent nothing more; enabled again, it gets the next event', async () => {
	let answer = 500;
	const failing = await registered(() => answer);
	const first = await finishedCampaign();
	await waitFor(
		'3 failed attempts',
		async () => failing.arrivals.filter((arrival) => arrival.event.data.id === first).length >= 3,
		60_000,
	);
	const shown = await waitFor(
		'GET to show it disabled',
		async () => {
			const got = await call('GET', `/api/webhooks/${failing.id}`);
			return got.json.disabled_at ? got.json : undefined;
		},
		10_000,
	);
	expect(shown).toMatchObject({
		id: failing.id,
		disabled_at: expect.any(String),
		disabled_reason: expect.stringContaining('3 delivery attempts in a row failed'),
	});
	expect(
		logLines().filter((line) => line.webhook === failing.id && String(line.msg).startsWith('webhook disabled')),
	).toHaveLength(1);

	// Disabled: the retries of the first event stop, and a new event is not sent to it.
	const before = failing.arrivals.length;
	const second = await finishedCampaign();
	const other = await registered();
	const third = await finishedCampaign();
	await waitFor('another receiver to get the third event', async () => arrivalOf(other, third), 30_000);
	// Instead of a fixed wait: once the second campaign has completed (its event is emitted with the
	// state change) and every event is delivered, a retry of the first event (the 4th attempt would
	// come 4 s after the 3rd) or a delivery of the second would have reached the receiver.
	await waitFor(
		'the second campaign to complete',
		async () => (await call('GET', `/api/campaigns/${second}`)).json.state === 'completed',
		30_000,
	);
	await waitForEventsDelivered(runner.context);
	expect(failing.arrivals.length).toBe(before);
	expect(arrivalOf(failing, second)).toBeUndefined();

	answer = 200;
	const enabled = await call('POST', `/api/webhooks/${failing.id}/enable`);
	expect(enabled.status).toBe(200);
	expect(enabled.json.disabled_at).toBeUndefined();
	expect((await call('POST', '/api/webhooks/wnosuch/enable')).status).toBe(404);
	const fourth = await finishedCampaign();
	await waitFor('the enabled receiver to get the next event', async () => arrivalOf(failing, fourth), 30_000);
	expect((await call('GET', `/api/webhooks/${failing.id}`)).json.disabled_at).toBeUndefined();
});

test('registrations are capped (RUNNER_MAX_WEBHOOKS=40) even when made at once, URLs at 2048 characters, and GET /api/webhooks comes a page at a time with the total', async () => {
	const { redis, keys } = runner.context;
	const existing = (await call('GET', '/api/webhooks')).json.total as number;
	expect(existing).toBe(await redis.zcard(keys.webhooks.all));
	const answers = await Promise.all(
		Array.from({ length: 50 - existing }, (_, i) =>
			call('POST', '/api/webhooks', { url: `https://hooks.example.com/${i}`, events: ['campaign.finished'] }),
		),
	);
	expect(answers.filter((answer) => answer.status === 201)).toHaveLength(40 - existing);
	for (const refused of answers.filter((answer) => answer.status !== 201))
		expect(refused.json).toMatchObject({ status: 409, message: expect.stringContaining('RUNNER_MAX_WEBHOOKS') });
	expect(await redis.zcard(keys.webhooks.all)).toBe(40);
	const hashes = (await scanKeys(redis, runner.env.RUNNER_PREFIX as string)).filter((key) =>
		/:webhook:[^:]+$/.test(key),
	);
	expect(hashes).toHaveLength(40);

	await call('DELETE', `/api/webhooks/${answers.find((answer) => answer.status === 201)?.json.id}`);
	const long = await call('POST', '/api/webhooks', {
		url: `https://hooks.example.com/${'a'.repeat(2049 - 'https://hooks.example.com/'.length)}`,
		events: ['campaign.finished'],
	});
	expect(long.json).toMatchObject({
		status: 400,
		field: 'url',
		message: expect.stringContaining('RUNNER_MAX_URL_LENGTH'),
	});
	expect(
		(
			await call('POST', '/api/webhooks', {
				url: `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`,
				events: ['campaign.finished'],
			})
		).status,
	).toBe(201);

	const all = await redis.zrange(keys.webhooks.all, 0, -1);
	const pages = [];
	for (let offset = 0; offset < 40; offset += 15) {
		const page = await call('GET', `/api/webhooks?limit=15&offset=${offset}`);
		expect(page.json).toMatchObject({ total: 40, limit: 15, offset });
		pages.push(...page.json.webhooks.map((webhook: { id: string }) => webhook.id));
	}
	expect(pages).toEqual(all);
	expect((await call('GET', '/api/webhooks?limit=501')).json).toMatchObject({ status: 400, field: 'limit' });
});
