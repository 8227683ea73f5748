/**
 * Wrong secrets from one address (127.0.0.1: a proxy, NAT or n8n's container that many clients
 * share) against a real `convo-runner start`, real Redis and the sandbox: past the limit only the
 * wrong secrets of that kind are answered 429; the right events header (the service's STOP
 * deliveries), the right bearer token and a sign-in with it always get in, and wrong tokens and
 * wrong events headers are counted apart. The period is a setting, here a few seconds.
 */
import { EVENTS_PATH } from '../../runner/src/http/eventRoutes';
import { apiCaller, positionalTemplate, startApi, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(120_000);

const TOKEN = 'lockout-token-0123456789abcdef';
const HEADER = 'X-Convo-Events';
const SECRET = 'events-secret-lockout-0123456789';
const PERIOD_MS = 4000;
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_EVENTS_HEADER_NAME: HEADER,
	RUNNER_EVENTS_HEADER_VALUE: SECRET,
	RUNNER_AUTH_FAILURE_PERIOD: `${PERIOD_MS}ms`,
});
let base = '';

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

beforeAll(async () => {
	base = await startApi(runner);
	await sandbox('POST', '/webhooks', {
		business: runner.business.id,
		url: `${base}${EVENTS_PATH}`,
		method: 'POST',
		headers: { [HEADER]: SECRET },
	});
	// Keywords count only to the business's numbers: a campaign scheduled from the number makes it one.
	const from = runner.business.phoneNumbers[0];
	const at = new Date(Date.now() + 86_400_000).toISOString();
	const created = await apiCaller(() => base, TOKEN)('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from,
		at,
		recipients: [{ phone: '4917000000002', 1: 'a', 2: 'b' }],
	});
	expect(created.status).toBe(201);
});

const event = (text: string) =>
	JSON.stringify({
		event: 'message_created',
		payload: {
			from: '4917000000001',
			to: runner.business.phoneNumbers[0],
			status: 'received',
			text,
			createdAt: new Date().toISOString(),
		},
	});
const postEvent = (value: string) =>
	fetch(`${base}${EVENTS_PATH}`, {
		method: 'POST',
		headers: { [HEADER]: value, 'content-type': 'application/json' },
		body: event('hello'),
	});
const getCampaigns = (token: string) =>
	fetch(`${base}/api/campaigns`, { headers: { authorization: `Bearer ${token}` } });
async function statuses(count: number, request: (i: number) => Promise<Response>): Promise<number[]> {
	const answers: number[] = [];
	for (let i = 0; i < count; i++) answers.push((await request(i)).status);
	return answers;
}

test("40 wrong events headers and 40 wrong tokens from 127.0.0.1: only the wrong ones past 30 of their kind get 429; the right header, the right token and a sign-in still get in, and the service's STOP is kept", async () => {
	const wrongHeaders = await statuses(40, (i) => postEvent(`wrong-events-secret-${i}-0123456789`));
	expect(wrongHeaders).toEqual([...Array(30).fill(401), ...Array(10).fill(429)]);
	// Counted apart: a wrong token is not held up by the events header's failures.
	const wrongTokens = await statuses(40, (i) => getCampaigns(`wrong-token-${i}-0123456789abcdef`));
	expect(wrongTokens).toEqual([...Array(30).fill(401), ...Array(10).fill(429)]);

	expect((await postEvent(SECRET)).status).toBe(200);
	expect((await getCampaigns(TOKEN)).status).toBe(200);
	const signIn = await fetch(`${base}/session`, {
		method: 'POST',
		redirect: 'manual',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: `token=${TOKEN}`,
	});
	expect(signIn.status).toBe(303);
	const wrongSignIn = await fetch(`${base}/session`, {
		method: 'POST',
		redirect: 'manual',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: 'token=still-wrong-0123456789abcdef',
	});
	expect(wrongSignIn.status).toBe(429);

	// The service's own STOP delivery (the sandbox posts it with the registered header) is taken.
	const customer = '4917000000777';
	await sandbox('POST', '/inbound', { business: runner.business.id, from: customer, text: 'STOP' });
	const delivered = await waitFor(
		'the STOP delivery to be answered',
		async () => {
			const all = (await sandbox('GET', `/webhooks/deliveries?business=${runner.business.id}`)) as Array<{
				statusCode?: number;
			}>;
			return all.length > 0 ? all : undefined;
		},
		20_000,
		50,
	);
	expect(delivered.map((delivery) => delivery.statusCode)).toEqual([200]);
	const check = await fetch(`${base}/api/suppressions/${customer}`, { headers: { authorization: `Bearer ${TOKEN}` } });
	expect(((await check.json()) as { suppressed: boolean }).suppressed).toBe(true);

	// Once the period is over, a wrong secret is answered 401 again.
	await new Promise((resolve) => setTimeout(resolve, PERIOD_MS));
	expect((await postEvent('wrong-events-secret-later-0123456789')).status).toBe(401);
	expect((await getCampaigns('wrong-token-later-0123456789abcdef')).status).toBe(401);

	const log = runner.processes.map((process) => process.output()).join('\n');
	expect(log).toContain('too many wrong events headers from this address');
	expect(log).toContain('too many failed tokens from this address');
	expect(log).not.toContain(SECRET);
	expect(log).not.toContain(TOKEN);
});

test('a phone in a request path reaches no log line: a wrong token, a right one and a path no route matches', async () => {
	const phones = ['4917000000991', '4917000000992', '4917000000993'];
	expect(
		(
			await fetch(`${base}/api/suppressions/${phones[0]}`, {
				headers: { authorization: 'Bearer wrong-token-path-0123456789abcdef' },
			})
		).status,
	).toBe(401);
	expect(
		(await fetch(`${base}/api/suppressions/${phones[1]}`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
	).toBe(200);
	expect(
		(await fetch(`${base}/api/no-such-route/${phones[2]}`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
	).toBe(404);
	const log = await waitFor(
		'the access log of the last request',
		async () => {
			const text = runner.processes.map((process) => process.output()).join('\n');
			return text.includes('/api/no-such-route/') ? text : undefined;
		},
		10_000,
		50,
	);
	expect(log).toMatch(/\/api\/suppressions\/:\w+/);
	expect(phones.filter((phone) => log.includes(phone) || log.includes(phone.slice(2)))).toEqual([]);
});
