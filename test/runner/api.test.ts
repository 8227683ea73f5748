/**
 * The control API over real HTTP against a running `convo-runner start` (real Redis, the sandbox):
 * every route's auth, validation errors in the one error shape, idempotent create, a streamed
 * 10,000-row CSV upload, streamed reports, and /metrics matching what the sandbox received.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

import { startPrivateRedis } from '../../runner/src/devRedis';
import {
	positionalTemplate,
	scanKeys,
	templateSends,
	startApi,
	startApiProcess,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';
import { readFileSync } from 'node:fs';

jest.setTimeout(120_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_UPLOAD_LIMIT_BYTES: String(1024 * 1024) });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

const auth = { authorization: `Bearer ${TOKEN}` };
async function call(
	method: string,
	path: string,
	options: { body?: unknown; raw?: string; type?: string; headers?: Record<string, string> } = {},
) {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			...auth,
			...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
			...(options.type ? { 'content-type': options.type } : {}),
			...options.headers,
		},
		body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
	});
	const text = await response.text();
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		json = undefined;
	}
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	return { status: response.status, json: json as any, text, headers: response.headers };
}

const settings = () => ({ template_id: positionalTemplate(runner.business).id, from: runner.business.phoneNumbers[0] });
const phonesOf = (n: number, seed: number) =>
	Array.from({ length: n }, (_, i) => `4917${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`);

test('/healthz and /readyz answer without a token; every other route refuses a missing or wrong token with 401 and no detail', async () => {
	expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
	// runners: the live runner processes on this Redis and prefix, here the one `start` (a count only: the probe is public).
	expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ok', runners: 1 });
	const openApi = await call('GET', '/openapi.json');
	expect(openApi.status).toBe(200);
	const routes = Object.entries(openApi.json.paths as Record<string, Record<string, unknown>>).flatMap(
		([path, methods]) =>
			Object.keys(methods).map((method) => [method.toUpperCase(), path.replace(/\{[^}]+\}/g, 'cx1')]),
	);
	expect(routes.length).toBeGreaterThanOrEqual(12);
	// The probes are listed without security, the events endpoint with the operator's header (its
	// name not shown: the document is served to anyone), every other route with the bearer token.
	const paths = openApi.json.paths as Record<string, Record<string, { security: unknown }>>;
	const security = Object.fromEntries(
		Object.entries(paths).flatMap(([path, methods]) =>
			Object.entries(methods).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation.security]),
		),
	);
	const byScheme = (scheme: unknown) =>
		Object.keys(security).filter((route) => JSON.stringify(security[route]) === JSON.stringify(scheme));
	expect(byScheme([])).toEqual(['GET /healthz', 'GET /readyz']);
	expect(byScheme([{ eventsHeader: [] }]).sort()).toEqual([
		'POST /api/events/message-created',
		'PUT /api/events/message-created',
	]);
	expect(byScheme([{ bearer: [] }])).toHaveLength(Object.keys(security).length - 4);
	const schemes = (openApi.json.components as { securitySchemes: Record<string, Record<string, string>> })
		.securitySchemes;
	expect(schemes.eventsHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'RUNNER_EVENTS_HEADER_NAME' });
	expect(Object.keys(paths['/api/events/message-created'].post)).toContain('responses');
	expect(
		Object.keys((paths['/api/events/message-created'].post as unknown as { responses: object }).responses),
	).toEqual(expect.arrayContaining(['200', '401', '404']));
	for (const [method, path] of routes) {
		if (path === '/healthz' || path === '/readyz') continue;
		if (path === '/api/events/message-created') {
			// The service's events carry the operator's header, never the token (replies.test.ts); this runner sets none, so the endpoint is off.
			for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }] as Array<Record<string, string>>) {
				const response = await fetch(`${base}${path}`, { method, headers });
				expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
				expect(((await response.json()) as { message: string }).message).toMatch(
					/not configured: set RUNNER_EVENTS_HEADER_NAME and RUNNER_EVENTS_HEADER_VALUE/,
				);
			}
			continue;
		}
		for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: TOKEN }] as Array<
			Record<string, string>
		>) {
			const response = await fetch(`${base}${path}`, { method, headers });
			expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
			expect(await response.json()).toEqual({ status: 401, code: 'unauthorized', message: 'missing or wrong token' });
		}
		// This address's failed tokens are forgotten after each route: past 30 it would get 429 for
		// every route that follows (the lockout itself is api-hardening.test.ts's).
		const failures = (await scanKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string)).filter((key) =>
			key.includes(':authfail:'),
		);
		if (failures.length > 0) await runner.context.redis.del(...failures);
	}
});

test('create from inline rows, follow, report as JSON and CSV; /metrics matches the sandbox log', async () => {
	const phones = phonesOf(20, 1);
	const rows = [
		...phones.map((phone, i) => ({ phone: `+${phone}`, 1: `Ana ${i}`, 2: `#${i}` })),
		{ phone: 'nope', 1: 'x', 2: 'y' },
	];
	const created = await call('POST', '/api/campaigns', { body: { ...settings(), rate: 100, recipients: rows } });
	expect(created.status).toBe(201);
	expect(created.json).toMatchObject({
		kind: 'campaign',
		accepted: 20,
		rejected: 1,
		rejections: [{ line: 21, phone: 'nope' }],
	});
	const id = created.json.id as string;
	const done = await waitFor(
		'the campaign to complete',
		async () => {
			const got = await call('GET', `/api/campaigns/${id}`);
			return got.json.state === 'completed' ? got.json : undefined;
		},
		60_000,
	);
	expect(done).toMatchObject({
		id,
		counts: { sent: 20, rejected: 1 },
		from: runner.business.phoneNumbers[0],
		total: 21,
	});

	const json = await call('GET', `/api/campaigns/${id}/report`);
	expect(json.headers.get('content-type')).toContain('application/json');
	expect(json.json).toHaveLength(21);
	const csv = await call('GET', `/api/campaigns/${id}/report?format=csv`);
	expect(csv.headers.get('content-disposition')).toContain(`campaign-${id}-report.csv`);
	expect(csv.text.trim().split('\n')).toHaveLength(22);

	const sends = (await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to));
	const metrics = parsePrometheusTextFormat((await call('GET', '/metrics')).text);
	const recipients = metrics.find((family) => family.name === 'convo_runner_campaign_recipients');
	const sent = recipients?.metrics.find((m) => m.labels?.campaign === id && m.labels?.outcome === 'sent');
	expect(Number(sent?.value)).toBe(sends.length);
	expect(sent?.labels?.number).toBe(runner.business.phoneNumbers[0]);
	expect(metrics.some((family) => family.name.startsWith('bullmq_'))).toBe(true);
});

test('Idempotency-Key: the same key returns the first campaign and sends nothing twice', async () => {
	const phones = phonesOf(5, 2);
	const body = { ...settings(), recipients: phones.map((phone) => ({ phone, 1: 'a', 2: 'b' })) };
	const first = await call('POST', '/api/campaigns', { body, headers: { 'idempotency-key': 'execution-42/node-7' } });
	const second = await call('POST', '/api/campaigns', { body, headers: { 'idempotency-key': 'execution-42/node-7' } });
	expect(first.status).toBe(201);
	expect(second.status).toBe(200);
	expect(second.json.id).toBe(first.json.id);
	expect(second.json.replayed).toBe(true);
	await waitFor(
		'the campaign to complete',
		async () => (await call('GET', `/api/campaigns/${first.json.id}`)).json.state === 'completed',
		60_000,
	);
	expect((await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to))).toHaveLength(5);
});

test('a 10,000-row CSV body is streamed to the parser; bad rows are rejected with their lines, not a 500', async () => {
	const { path } = writeRecipientsCsv(10_000, { seed: 30, extraLines: ['+49 170 x,a,b', '"unclosed,a'] });
	const at = new Date(Date.now() + 3_600_000).toISOString();
	const query = new URLSearchParams({ ...settings(), at }).toString();
	const created = await call('POST', `/api/campaigns?${query}`, { raw: readFileSync(path, 'utf8'), type: 'text/csv' });
	expect(created.status).toBe(400);
	expect(created.json.message).toMatch(/not valid CSV/);
	const clean = writeRecipientsCsv(10_000, { seed: 30, extraLines: ['+49 170 x,a,b', '+4917030000001,dup,row'] });
	const ok = await call('POST', `/api/campaigns?${query}`, { raw: readFileSync(clean.path, 'utf8'), type: 'text/csv' });
	expect(ok.status).toBe(201);
	expect(ok.json).toMatchObject({ state: 'scheduled', accepted: 10_000, rejected: 2 });
	expect(ok.json.rejections.map((r: { line: number }) => r.line)).toEqual([10_002, 10_003]);
	await call('POST', `/api/campaigns/${ok.json.id}/cancel`);

	const ndjson = `{"phone":"+4917040000001","1":"a","2":"b"}\n{not json}\n{"phone":"+4917040000002","1":"a","2":"b"}\n`;
	const fromNdjson = await call('POST', `/api/campaigns?${query}`, { raw: ndjson, type: 'application/x-ndjson' });
	expect(fromNdjson.json).toMatchObject({ accepted: 2, rejected: 1, rejections: [{ line: 2 }] });
	await call('POST', `/api/campaigns/${fromNdjson.json.id}/cancel`);
});

test('an uploaded semicolon CSV (Excel in many locales) is read by the same rule as the CLI: the delimiter is told from the header line', async () => {
	const query = new URLSearchParams({ ...settings(), at: new Date(Date.now() + 3_600_000).toISOString() }).toString();
	const csv = `\uFEFFphone;1;2\r\n${phonesOf(3, 35)
		.map((phone) => `+${phone};Müller, Anna;b`)
		.join('\r\n')}\r\n`;
	const created = await call('POST', `/api/campaigns?${query}`, { raw: csv, type: 'text/csv' });
	expect(created.status).toBe(201);
	expect(created.json).toMatchObject({ accepted: 3, rejected: 0 });
	await call('POST', `/api/campaigns/${created.json.id}/cancel`);
	const noPhone = await call('POST', `/api/campaigns?${query}`, {
		raw: 'Telefon;Name\n+4917035000009;Anna\n',
		type: 'text/csv',
	});
	expect(noPhone.status).toBe(400);
	expect(noPhone.json.message).toMatch(/has no "phone" column or field: .*read as 2 columns, .*"Telefon", "Name"$/);
	// A delimiter given in the query is used as given, by the same rule and words as the CLI's --delimiter.
	const given = await call('POST', `/api/campaigns?${query}&delimiter=comma`, { raw: csv, type: 'text/csv' });
	expect(given.status).toBe(400);
	expect(given.json.message).toMatch(/read as 1 column, with the comma delimiter given: "phone;1;2"$/);
	const named = await call('POST', `/api/campaigns?${query}&delimiter=semicolon`, { raw: csv, type: 'text/csv' });
	expect(named.json).toMatchObject({ accepted: 3, rejected: 0 });
	await call('POST', `/api/campaigns/${named.json.id}/cancel`);
	const wrong = await call('POST', `/api/campaigns?${query}&delimiter=pipe`, { raw: csv, type: 'text/csv' });
	expect(wrong.json).toMatchObject({
		status: 400,
		field: 'delimiter',
		message: 'delimiter must be comma, semicolon or tab (or , ; and a tab character)',
	});
});

test('validation errors name the field in the one error shape; unknown ids are 404; oversize uploads 413', async () => {
	const bad = await call('POST', '/api/campaigns', {
		body: {
			template_id: 'not-a-uuid',
			from: runner.business.phoneNumbers[0],
			recipients: [{ phone: '4917000000001' }],
		},
	});
	expect(bad.status).toBe(400);
	expect(bad.json).toMatchObject({ status: 400, code: 'validation_failed' });
	expect(bad.json.message).toMatch(/^template_id must be a UUID/);
	const neither = await call('POST', '/api/campaigns', { body: settings() });
	expect(neither.json).toMatchObject({ status: 400, field: 'recipients' });
	const wrongType = await call('POST', '/api/campaigns', { body: { ...settings(), recipients: 'all of them' } });
	expect(wrongType.json).toMatchObject({ status: 400, field: 'recipients' });
	expect((await call('GET', '/api/campaigns/cnosuch')).json).toEqual({
		status: 404,
		code: 'not_found',
		message: 'No campaign with id cnosuch',
	});
	expect((await call('POST', '/api/campaigns/cnosuch/pause')).status).toBe(404);
	expect((await call('PUT', '/api/campaigns/cnosuch/rate', { body: { rate: 0 } })).json).toMatchObject({
		status: 400,
		field: 'rate',
		message: 'rate must be at least 1 send per second',
	});
	// One rate rule (the contract's runnerRate) for every client: the API says it as the CLI does, under its own name.
	expect(
		(
			await call('POST', '/api/campaigns', {
				body: { ...settings(), rate: 2.5, recipients: [{ phone: '4917000000001' }] },
			})
		).json,
	).toMatchObject({ status: 400, field: 'rate', message: 'rate must be a whole number of sends per second' });
	// The API has no format setting: a source whose name does not tell it is refused naming source_url, not the CLI's --format.
	expect(
		(
			await call('POST', '/api/campaigns', {
				body: { ...settings(), source_url: 'https://feeds.example.com/recipients' },
			})
		).json,
	).toEqual({
		status: 400,
		code: 'validation_failed',
		field: 'source_url',
		message:
			'cannot tell the format of https://feeds.example.com/recipients from its name: use a .csv, .tsv, .txt, .json or .ndjson name',
	});
	expect(
		(
			await call('POST', `/api/campaigns?${new URLSearchParams({ ...settings(), rate: 'fast' })}`, {
				raw: 'phone\n4917000000001\n',
				type: 'text/csv',
			})
		).json,
	).toMatchObject({ status: 400, field: 'rate', message: 'rate must be a number' });
	const big = 'phone,1,2\n' + '+4917050000001,aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,b\n'.repeat(30_000);
	const tooLarge = await call(
		'POST',
		`/api/campaigns?${new URLSearchParams({ ...settings(), at: new Date(Date.now() + 3_600_000).toISOString() })}`,
		{ raw: big, type: 'text/csv' },
	);
	expect(tooLarge.status).toBe(413);
	expect(tooLarge.json).toMatchObject({ status: 413, code: 'payload_too_large' });
});

test('pause, resume, rate, cancel, reconcile and retry-not-sent over HTTP', async () => {
	const phones = phonesOf(300, 3);
	const created = await call('POST', '/api/campaigns', {
		body: { ...settings(), rate: 20, recipients: phones.map((phone) => ({ phone, 1: 'a', 2: 'b' })) },
	});
	const id = created.json.id as string;
	expect((await call('POST', `/api/campaigns/${id}/pause`)).json).toEqual({ id, state: 'paused' });
	expect((await call('POST', `/api/campaigns/${id}/resume`)).json).toEqual({ id, state: 'running' });
	expect((await call('PUT', `/api/campaigns/${id}/rate`, { body: { rate: 50 } })).json).toEqual({ id, rate: 50 });
	expect((await call('POST', `/api/campaigns/${id}/cancel`)).json).toMatchObject({ id, state: 'cancelled' });
	expect((await call('POST', `/api/campaigns/${id}/reconcile`)).json).toEqual({
		id,
		checked: 0,
		sent: 0,
		not_sent: 0,
		still_unknown: 0,
	});
	expect((await call('POST', `/api/campaigns/${id}/retry-not-sent`)).json).toMatchObject({ id, requeued: 0 });
	expect((await call('GET', `/api/campaigns/${id}/errors`)).json).toEqual([
		expect.objectContaining({ outcome: 'cancelled', reason: 'cancelled by the operator' }),
	]);
	expect((await call('GET', `/api/campaigns/${id}/rate-history`)).json).toHaveLength(600);
	const page = await call('GET', '/api/campaigns?limit=2&offset=0');
	expect(page.json).toMatchObject({ limit: 2, offset: 0 });
	expect(page.json.items).toHaveLength(2);
	expect(page.json.total).toBeGreaterThanOrEqual(4);
});

test('bull-board is behind the same sign-in and shows the send queues read-only', async () => {
	expect(
		(await fetch(`${base}/admin/queues`, { headers: { accept: 'text/html' }, redirect: 'manual' })).headers.get(
			'location',
		),
	).toBe('/login');
	expect((await fetch(`${base}/admin/queues/api/queues`)).status).toBe(401);
	// A campaign on the number gives it a send queue.
	await call('POST', '/api/campaigns', {
		body: {
			...settings(),
			at: new Date(Date.now() + 3_600_000).toISOString(),
			recipients: [{ phone: '4917000000777', 1: 'a', 2: 'b' }],
		},
	});
	const board = await call('GET', '/admin/queues/api/queues');
	expect(board.status).toBe(200);
	// Shown without the hash tags their names hold (runner/src/keys.ts).
	const names = (board.json.queues as Array<{ displayName: string; readOnlyMode: boolean; allowRetries: boolean }>).map(
		(queue) => [queue.displayName, queue.readOnlyMode, queue.allowRetries],
	);
	expect(names).toContainEqual([`send-${runner.business.phoneNumbers[0]}`, true, false]);
	expect(names).toContainEqual(['control', true, false]);
});

test('/readyz answers 503 with the reason when Redis stops answering, while /healthz (liveness) stays 200', async () => {
	const own = await startPrivateRedis();
	// Ready once it answers 200 on /readyz, on a port the system picked.
	const { base: ownBase, process: started } = await startApiProcess(runner, { REDIS_URL: own.url });
	try {
		const url = `${ownBase}/readyz`;
		await own.stop();
		const answer = await waitFor(
			'the readiness check to fail',
			async () => {
				const response = await fetch(url).catch(() => undefined);
				return response?.status === 503 ? response.json() : undefined;
			},
			30_000,
		);
		expect(answer).toEqual({ status: 'unavailable', reason: 'Redis does not answer' });
		const live = await fetch(`${ownBase}/healthz`);
		expect({ status: live.status, body: await live.json() }).toEqual({ status: 200, body: { status: 'ok' } });
	} finally {
		await started.kill('SIGKILL');
		await own.stop();
	}
});
