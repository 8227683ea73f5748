// @serial: measures the tracking rate in every sliding second, and SIGKILLs the runners during tracking
/**
 * Delivery tracking (#22) against the sandbox, started with a tenth of its default timeline: its
 * outbound messages go enqueued -> sent (200 ms) -> delivered (400 ms) -> read (1 s), and fail
 * (200 ms) to a contact it marks undeliverable. The runner asks A1 (and B7 for a failure's reason);
 * the sandbox logs every check it received, per message and timed on its own clock (where the rate
 * is measured), and a counting proxy in this process counts them where the runner is restarted or
 * its role changed. The schedule is a tenth of 3s,6s,12s,20s, so it still has a step before each
 * state and a check after the last; the rate is low enough that the checks bunch without pacing
 * (the send rate and the schedule ask for more than it in some second) and so the pacing is seen.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { RunnerEvent } from 'convo-contract';
import { campaignView, getCampaign } from '../../runner/src/core/campaigns';
import { endpointOf } from '../../sandbox/src/endpoints';
import {
	clearFaults,
	deliveryChecks,
	expectBusiestAtMost,
	positionalTemplate,
	runCli,
	setFault,
	startApi,
	startCountingProxy,
	useRunnerUnderTest,
	waitFor,
	waitForEventsDelivered,
	waitForFeederTick,
	waitForTrackingTick,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(300_000);

const TOKEN = 'test-token-0123456789abcdef';
const SCHEDULE = [300, 600, 1200, 2000];
const SCHEDULE_STEPS = SCHEDULE.length;
const RATE = 20;
/** How often a tracking tick starts (jobs.ts). */
const TICK_MS = 1000;
const runner = useRunnerUnderTest(
	{
		RUNNER_TOKEN: TOKEN,
		RUNNER_TRACKING_SCHEDULE: SCHEDULE.map((ms) => `${ms}ms`).join(','),
		RUNNER_TRACKING_RATE: String(RATE),
	},
	{ sandbox: { timeline: { sent: 200, delivered: 400, read: 1000, failed: 200 } } },
);
/**
 * The SIGKILL test's runners: a killed process's claimed checks come back after the claim lease
 * and its tick lock lapses, both shortened (the lease must outlast twice the HTTP deadline plus 1 s).
 */
const KILLABLE = { RUNNER_HTTP_DEADLINE: '2s', RUNNER_TRACKING_CLAIM_LEASE: '6s', RUNNER_TRACKING_LOCK: '3s' };
/** The fixture's contact the sandbox cannot deliver to (business 0). */
const UNDELIVERABLE = '4915112340003';
const REASON = 'The recipient cannot receive messages on this channel';

let proxy: Awaited<ReturnType<typeof startCountingProxy>>;
let base = '';
const events: RunnerEvent[] = [];
let receiverUrl = '';
let closeReceiver: () => Promise<void>;

beforeAll(async () => {
	proxy = await startCountingProxy(runner.sandbox.baseUrl);
	const server = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', () => {
			events.push(JSON.parse(body) as RunnerEvent);
			response.writeHead(200).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
	closeReceiver = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
	await proxy?.close();
	await closeReceiver?.();
});

/** The runner's env with both APIs reached through the counting proxy. */
const throughProxy = () => ({
	CONVO_BASE_URL: proxy.url,
	CONVO_ACCESS_TOKEN: runner.business.accessToken,
	CONVO_EXTERNAL_URL: `${proxy.url}/api/external/v2`,
});
/**
 * The runner's env with both APIs reached directly: where a rate is measured. The proxy lives in
 * this test process, which a loaded machine stalls, and then stamps and forwards the requests that
 * came meanwhile together, a bunch the runner never sent; the sandbox is a process of its own and
 * stamps each request as it arrives.
 */
const direct = () => ({
	CONVO_BASE_URL: runner.sandbox.baseUrl,
	CONVO_ACCESS_TOKEN: runner.business.accessToken,
	CONVO_EXTERNAL_URL: runner.sandbox.externalUrl,
});

async function call(method: string, path: string, body?: unknown) {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	return { status: response.status, text, json: (text && /^[[{]/.test(text) ? JSON.parse(text) : undefined) as any };
}

interface SandboxOutbound {
	uuid: string;
	to: string;
	status: string;
	source: string;
}
async function sandboxMessages(): Promise<SandboxOutbound[]> {
	return ((await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/messages`)).json()) as SandboxOutbound[]).filter(
		(message) => message.source === 'template',
	);
}

/** A1 status requests per message id, and their arrival times. */
function statusChecks(): { perMessage: Map<string, number>; times: number[] } {
	const perMessage = new Map<string, number>();
	const times: number[] = [];
	proxy.requests.forEach((url, i) => {
		const match = /\/v1\/messages\/status\/([^/]+)$/.exec(url.pathname);
		if (!match) return;
		perMessage.set(match[1], (perMessage.get(match[1]) ?? 0) + 1);
		times.push(proxy.arrivals[i]);
	});
	return { perMessage, times };
}

/** A1 and B7 requests as the sandbox received them: A1 per message id, B7 lookups by phone, and their arrival times on its clock. */
async function sandboxChecks(): Promise<{
	perMessage: Map<string, number>;
	lookups: Map<string, number>;
	times: number[];
}> {
	const { status, conversations } = await deliveryChecks(runner.sandbox);
	const count = (log: Record<string, string[]>) =>
		new Map(Object.entries(log).map(([key, times]) => [key, times.length]));
	return {
		perMessage: count(status),
		lookups: count(conversations),
		times: [...Object.values(status), ...Object.values(conversations)].flat().map((time) => Date.parse(time)),
	};
}

/** How many B7 lookups the sandbox received in all, by phone or not. */
async function conversationRequests(): Promise<number> {
	const { counts } = (await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`)).json()) as {
		counts: Record<string, number>;
	};
	return (
		Object.entries(counts).find(
			([endpoint]) => endpoint.startsWith('GET ') && endpoint.endsWith('/conversations'),
		)?.[1] ?? NaN
	);
}

async function createCampaignOver(count: number, seed: number, extraLines: string[] = []): Promise<string> {
	const { path } = writeRecipientsCsv(count, { seed, extraLines });
	const created = await runCli(
		[
			'campaign',
			'create',
			'--template',
			positionalTemplate(runner.business).id,
			'--from',
			`+${runner.business.phoneNumbers[0]}`,
			'--recipients',
			path,
			'--rate',
			'50',
			'--json',
		],
		runner.env,
	);
	expect(created.code).toBe(0);
	return (JSON.parse(created.stdout) as { id: string }).id;
}

/**
 * The wait after which an event that was coming has come: a tracking tick and a feeder tick that
 * began after now (the campaign's tracking walked, and settled again if it was still tracked: the
 * script that settles it emits in the same step), then every event emitted so far delivered.
 */
async function toldEverything(): Promise<void> {
	await Promise.all([waitForTrackingTick(runner.context), waitForFeederTick(runner.context)]);
	await waitForEventsDelivered(runner.context);
}

const settled = (id: string) => async () => {
	const view = await campaignView(runner.context, id);
	return view.funnel?.settled ? view : undefined;
};

test('every sent message is tracked to read or failed (with B7 reason), the funnel equals the sandbox everywhere, the rate holds, settled is told once, retry --undelivered sends once', async () => {
	await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`, { method: 'DELETE' });
	base = await startApi(runner, direct());
	const hook = await call('POST', '/api/webhooks', {
		url: receiverUrl,
		events: ['campaign.finished', 'campaign.delivery_settled'],
	});
	expect(hook.status).toBe(201);

	const id = await createCampaignOver(20, 41, [`+${UNDELIVERABLE},Alan,order x`]);
	const view = await waitFor('delivery tracking to settle', settled(id), 120_000, 100);

	// What the sandbox shows per message now is what the runner recorded.
	const messages = await sandboxMessages();
	expect(messages).toHaveLength(21);
	const expected = {
		read: messages.filter((m) => m.status === 'read').length,
		failed: messages.filter((m) => m.status === 'failed').length,
	};
	expect(expected).toEqual({ read: 20, failed: 1 });
	const funnel = view.funnel;
	expect(funnel).toEqual({
		audience: 21,
		accepted: 21,
		sent: 21,
		delivered: 20,
		read: 20,
		replied: 0,
		failed_delivery: 1,
		in_flight: 0,
		failed_reasons: [{ reason: REASON, count: 1 }],
		rates: { delivered: 0.952, read: 0.952, replied: 0, failed_delivery: 0.048 },
		tracking: 'messaging_api',
		settled: true,
	});

	// The CLI's answers read below, asked together (each is a process start): the status, the report,
	// and retries whose filters match nothing, so they change nothing (the event checks below come after them).
	const [statusJson, statusText, cliFailed, bad, ...none] = await Promise.all([
		runCli(['campaign', 'status', id, '--json'], runner.env),
		runCli(['campaign', 'status', id], runner.env),
		runCli(['campaign', 'report', id, '--outcome', 'failed-delivery', '--format', 'csv'], runner.env),
		...[
			['--after', 'soon'],
			['--reason', 'no such reason', '--json'],
			['--after', '1h', '--json'],
		].map((filter) => runCli(['campaign', 'retry', id, '--undelivered', ...filter], runner.env)),
	]);

	// The API's view, its list item and the CLI's status (JSON and human) say the same.
	expect((await call('GET', `/api/campaigns/${id}`)).json.funnel).toEqual(funnel);
	expect(
		(await call('GET', '/api/campaigns')).json.items.find((item: { id: string }) => item.id === id).funnel,
	).toEqual(funnel);
	expect(JSON.parse(statusJson.stdout).funnel).toEqual(funnel);
	expect(statusText.stdout).toContain(
		'delivered 20 (95.2%), read 20 (95.2%), replied 0 (0.0%), failed delivery 1 (4.8%), in flight 0; settled',
	);
	expect(statusText.stdout).toContain(`failed 1: ${REASON}`);

	// The report, message by message, as the sandbox shows it.
	const rows = (await call('GET', `/api/campaigns/${id}/report?format=json`)).json as Array<{
		phone: string;
		message_id: string;
		delivery: string;
		delivered_at: string | null;
		read_at: string | null;
		delivery_error: string | null;
		replied_at: string | null;
	}>;
	const byId = new Map(messages.map((m) => [m.uuid, m]));
	for (const row of rows) {
		expect({ phone: row.phone, delivery: row.delivery }).toEqual({
			phone: row.phone,
			delivery: byId.get(row.message_id)?.status,
		});
		if (row.delivery === 'read') expect(row.read_at && row.delivered_at).toBeTruthy();
		expect(row.replied_at).toBeNull();
	}
	const failedRow = rows.find((row) => row.phone === UNDELIVERABLE);
	expect(failedRow).toMatchObject({ delivery: 'failed', delivery_error: REASON, delivered_at: null });

	// failed-delivery pages through the failed ones only, in the API and the CLI.
	const apiFailed = (await call('GET', `/api/campaigns/${id}/report?format=json&outcome=failed-delivery`))
		.json as Array<{ phone: string }>;
	expect(apiFailed.map((row) => row.phone)).toEqual([UNDELIVERABLE]);
	expect(cliFailed.stdout.trim().split('\n')).toHaveLength(2);
	expect(cliFailed.stdout).toContain(`${UNDELIVERABLE},sent,`);
	expect(cliFailed.stdout.split('\n')[0]).toContain('delivery,delivered_at,read_at,replied_at,delivery_error');

	// No message checked more often than the schedule allows; the failed one asked B7 once for its reason.
	const { perMessage, lookups, times } = await sandboxChecks();
	expect(perMessage.size).toBe(21);
	for (const [message, checks] of perMessage)
		expect({ message, checks: Math.min(checks, SCHEDULE_STEPS) }).toEqual({ message, checks });
	expect(perMessage.get(failedRow?.message_id as string)).toBe(1);
	expect(Object.fromEntries(lookups)).toEqual({ [UNDELIVERABLE]: 1 });
	expect(await conversationRequests()).toBe(1);
	// The tracking rate (A1 and B7 together) holds in every sliding second at the service.
	expectBusiestAtMost(times, RATE);

	// /metrics has the funnel.
	const metrics = (await call('GET', '/metrics')).text;
	expect(metrics).toContain(
		`convo_runner_campaign_funnel{campaign="${id}",number="${runner.business.phoneNumbers[0]}",stage="read"} 20`,
	);
	expect(metrics).toMatch(
		new RegExp(`convo_runner_campaign_failed_delivery\\{campaign="${id}",[^}]*reason="${REASON}"\\} 1`),
	);

	// campaign.delivery_settled reaches the webhook once, with the funnel; campaign.finished carries a funnel too.
	await waitFor(
		'the settled event',
		async () => events.some((event) => event.type === 'campaign.delivery_settled' && event.data.id === id),
		30_000,
	);
	await toldEverything();
	const settledEvents = events.filter((event) => event.type === 'campaign.delivery_settled' && event.data.id === id);
	expect(settledEvents).toHaveLength(1);
	expect(settledEvents[0].data.funnel).toEqual(funnel);
	const finished = events.find((event) => event.type === 'campaign.finished' && event.data.id === id);
	expect(finished?.data.funnel).toMatchObject({ audience: 21, sent: 21, tracking: 'messaging_api' });

	// retry --undelivered: filters that match nothing sent nothing; then only the failed one, once.
	for (const answer of none) expect(JSON.parse(answer.stdout)).toMatchObject({ requeued: 0 });
	expect(bad.code).toBe(1);
	expect(bad.stderr).toContain('--after must be a duration like 30s, 15m, 2h or 1d');
	// The resend is held (429, Retry-After 1 s: not an attempt) until the faults are cleared, so the
	// campaign is surely still running when the retry below is asked, however slow the CLI and API are.
	await setFault(runner.sandbox, {
		endpoint: 'POST /api/external/v2/send-template',
		rateLimit: { retryAfterSeconds: 1 },
	});
	const retried = await runCli(
		['campaign', 'retry', id, '--undelivered', '--reason', 'CANNOT RECEIVE', '--json'],
		runner.env,
	);
	expect(JSON.parse(retried.stdout)).toMatchObject({ requeued: 1, state: 'running' });
	// While it runs again a retry is refused, as retry-not-sent's is.
	expect((await call('POST', `/api/campaigns/${id}/retry-undelivered`, {})).status).toBe(400);
	// A body that breaks its rule is refused naming the field as sent (the OpenAPI document declares it).
	expect((await call('POST', `/api/campaigns/${id}/retry-undelivered`, { after: '5 minutes' })).json).toMatchObject({
		status: 400,
		field: 'after',
		message: 'after must be a duration like 30s, 15m, 2h or 1d',
	});
	await clearFaults(runner.sandbox);
	await waitFor(
		'the retried campaign to complete',
		async () => (await getCampaign(runner.context, id)).state === 'completed',
		60_000,
		100,
	);
	const again = await call('POST', `/api/campaigns/${id}/retry-undelivered`, {});
	expect(again.json).toMatchObject({ requeued: 0 });
	const afterRetry = await sandboxMessages();
	expect(afterRetry.filter((m) => m.to === UNDELIVERABLE)).toHaveLength(2);
	expect(afterRetry).toHaveLength(22);
	// The resend is tracked (failed again), and is never sent a third time.
	await waitFor(
		'the resend to be tracked',
		async () => ((await campaignView(runner.context, id)).funnel?.failed_delivery === 1 ? true : undefined),
		60_000,
		100,
	);
	const third = await call('POST', `/api/campaigns/${id}/retry-undelivered`, {});
	expect(third.json).toMatchObject({ requeued: 0 });
	const resent = (await call('GET', `/api/campaigns/${id}/report?format=json&outcome=failed-delivery`)).json as Array<{
		phone: string;
		message_id: string;
	}>;
	expect(resent).toHaveLength(1);
	expect(resent[0].message_id).not.toBe(failedRow?.message_id);
	await toldEverything();
	expect(events.filter((event) => event.type === 'campaign.delivery_settled' && event.data.id === id)).toHaveLength(1);
});

test('SIGKILL during tracking: after a restart every sent message still reaches its final state, none checked more than the schedule allows (one repeat at most for a check in flight)', async () => {
	for (const process of runner.processes) await process.kill('SIGKILL');
	proxy.requests.length = 0;
	proxy.arrivals.length = 0;
	const first = runner.spawnWorker({ ...throughProxy(), ...KILLABLE });
	const id = await createCampaignOver(60, 42);
	// Every send made first, so the kill stops tracking alone (as with the production schedule,
	// whose first check comes long after a campaign this size has been sent).
	await waitFor(
		'tracking under way after the sends',
		async () => statusChecks().times.length >= 30 && (await getCampaign(runner.context, id))?.state === 'completed',
		60_000,
		50,
	);
	await first.kill('SIGKILL');
	const atKill = statusChecks().times.length;
	runner.spawnWorker({ ...throughProxy(), ...KILLABLE });
	const view = await waitFor('delivery tracking to settle after the restart', settled(id), 120_000, 100);
	expect(view.funnel).toMatchObject({
		sent: 60,
		delivered: 60,
		read: 60,
		failed_delivery: 0,
		in_flight: 0,
		settled: true,
	});
	const messages = (await sandboxMessages()).filter((m) => !m.to.startsWith('4915112340003'));
	const { perMessage } = statusChecks();
	expect(statusChecks().times.length).toBeGreaterThan(atKill);
	const repeated = [...perMessage.values()].filter((checks) => checks > SCHEDULE_STEPS);
	// A check claimed by the killed process and not written is asked again once: at most a tick's worth.
	for (const checks of perMessage.values()) expect(checks).toBeLessThanOrEqual(SCHEDULE_STEPS + 1);
	expect(repeated.length).toBeLessThanOrEqual(RATE);
	// Exactly so: each message was asked as often as its tracking record says a check was written
	// (`k`), once more where the killed process had asked and not written; a round's claims at most.
	const records = await runner.context.redis.hgetall(runner.context.keys.tracked(runner.business.phoneNumbers[0], id));
	expect(Object.keys(records)).toHaveLength(60);
	const askedAgain = Object.values(records).flatMap((text) => {
		const { m: message, k: written } = JSON.parse(text) as { m: string; k: number };
		const asked = perMessage.get(message) ?? 0;
		return asked === written ? [] : [{ message, asked, written }];
	});
	expect(askedAgain.filter(({ asked, written }) => asked !== written + 1)).toEqual([]);
	expect(askedAgain.length).toBeLessThanOrEqual(RATE);
	const rows = (await runCli(['campaign', 'report', id, '--json'], runner.env)).stdout;
	for (const row of JSON.parse(rows) as Array<{ message_id: string; delivery: string }>) {
		expect({ id: row.message_id, delivery: row.delivery }).toEqual({
			id: row.message_id,
			delivery: messages.find((m) => m.uuid === row.message_id)?.status,
		});
	}
});

test('without the messaging API credential tracking uses B7 only and says conversations_only: read and failed are told, delivered is not', async () => {
	for (const process of runner.processes) await process.kill('SIGKILL');
	proxy.requests.length = 0;
	proxy.arrivals.length = 0;
	const env = { ...throughProxy() } as Record<string, string | undefined>;
	delete env.CONVO_BASE_URL;
	delete env.CONVO_ACCESS_TOKEN;
	runner.spawnWorker(env as NodeJS.ProcessEnv);
	const id = await createCampaignOver(5, 43, [`+${UNDELIVERABLE},Alan,order y`]);
	const view = await waitFor('B7 tracking to settle', settled(id), 120_000, 100);
	expect(view.funnel).toMatchObject({
		sent: 6,
		delivered: 5,
		read: 5,
		failed_delivery: 1,
		failed_reasons: [{ reason: REASON, count: 1 }],
		tracking: 'conversations_only',
		settled: true,
	});
	expect(statusChecks().perMessage.size).toBe(0);
});

test('RUNNER_TRACKING=off makes a send-only process: it sends and checks nothing; a process with tracking on then checks every message', async () => {
	for (const process of runner.processes) await process.kill('SIGKILL');
	proxy.requests.length = 0;
	proxy.arrivals.length = 0;
	runner.spawnWorker({ ...throughProxy(), RUNNER_TRACKING: 'off' });
	const id = await createCampaignOver(8, 44);
	await waitFor(
		'the campaign to complete',
		async () => (await getCampaign(runner.context, id))?.state === 'completed' || undefined,
		60_000,
		200,
	);
	// Two schedule steps fall due meanwhile: a tracking process would have asked A1 twice per message
	// (its next tick, and a round a second for each RATE checks), and a second more for good measure.
	const twoChecksEach = SCHEDULE[1] + TICK_MS + Math.ceil((2 * 8) / RATE) * 1000 + 1000;
	await new Promise((resolve) => setTimeout(resolve, twoChecksEach));
	expect(statusChecks().times).toHaveLength(0);
	expect(proxy.requests.filter((url) => url.pathname.endsWith('/conversations'))).toHaveLength(0);
	expect((await campaignView(runner.context, id)).funnel).toMatchObject({ sent: 8, delivered: 0, settled: false });

	runner.spawnWorker({ ...throughProxy(), RUNNER_TRACKING: 'on' });
	const view = await waitFor('tracking by the other process to settle', settled(id), 120_000, 100);
	expect(view.funnel).toMatchObject({ sent: 8, delivered: 8, read: 8, in_flight: 0, settled: true });
	expect(statusChecks().perMessage.size).toBe(8);
});

test('a check the service leaves unanswered is asked again at its step, a few times: a blip over every step of the schedule still ends in the funnel', async () => {
	for (const process of runner.processes) await process.kill('SIGKILL');
	const earlier = new Set((await sandboxMessages()).map((message) => message.uuid));
	// Every A1 check answered 503 while the fault holds: the service did not answer it.
	await setFault(runner.sandbox, { endpoint: endpointOf('getMessageStatus'), errorRate: 1, errorStatus: 503 });
	runner.spawnWorker(direct());
	const id = await createCampaignOver(4, 45);
	const checksOfThisCampaign = async () => {
		const { perMessage } = await sandboxChecks();
		return [...perMessage].filter(([uuid]) => !earlier.has(uuid)).map(([, checks]) => checks);
	};
	// As many unanswered checks per message as the schedule has steps: had each used up its step,
	// none would be left to ask once the service answers again.
	await waitFor(
		'every message checked once per step of the schedule, unanswered',
		async () => {
			const checks = await checksOfThisCampaign();
			return (checks.length === 4 && checks.every((count) => count >= SCHEDULE_STEPS)) || undefined;
		},
		60_000,
		100,
	);
	await clearFaults(runner.sandbox);
	const view = await waitFor('tracking to settle once the service answers', settled(id), 60_000, 100);
	expect(view.funnel).toMatchObject({ sent: 4, delivered: 4, in_flight: 0, settled: true });
	// Each step is asked at most once and three times again (UNANSWERED_RETRIES in tracking.ts).
	for (const count of await checksOfThisCampaign()) expect(count).toBeLessThanOrEqual(SCHEDULE_STEPS * 4);
});
