import { OPERATION_KEYS, OPERATIONS } from 'convo-contract';
import { startSandbox } from '../../sandbox/src';
import { validInputs } from './inputs';
import {
	admin,
	authHeaders,
	call,
	contactOf,
	expectErrorBody,
	operationUrl,
	read,
	textMessage,
	useSandbox,
} from './support';

describe('sandbox: bad input, unknown paths, size limits (never a 500, never a crash)', () => {
	const context = useSandbox();
	const sendUrl = () => `${context.sandbox.baseUrl}/v1/messages/send`;
	const bearer = () => ({ authorization: `Bearer ${context.business.accessToken}` });

	it('invalid JSON is 400 with the error body naming the body', async () => {
		for (const raw of ['{bad', '{"to": }', '[1,', 'null x']) {
			const answer = await call(context, 'sendMessage', { raw });
			expectErrorBody(answer, 400);
			expect(answer.body.field).toBe('body');
		}
	});

	it('bodies over 1 MB are 413, on the API and the admin API', async () => {
		const huge = JSON.stringify({
			...textMessage(context.business, '+4915112340001'),
			content: { text: 'x'.repeat(1024 * 1024 + 10) },
		});
		expectErrorBody(await call(context, 'sendMessage', { raw: huge }), 413);
		expectErrorBody(await call(context, 'upsertSearchItem', { raw: huge }), 413);
		expectErrorBody(
			await read(
				await fetch(`${context.sandbox.baseUrl}/__sandbox/inbound`, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: huge,
				}),
			),
			413,
		);
		// Just under the limit is read (and then judged by the contract).
		const near = JSON.stringify({
			...textMessage(context.business, contactOf(context.business, { inWindow: true }).phoneNumber),
			content: { text: 'x'.repeat(1000 * 1000) },
		});
		expect((await call(context, 'sendMessage', { raw: near })).status).toBe(200);
	});

	it('a body of another content type, text/plain included, is 415 naming application/json', async () => {
		const xml = await read(
			await fetch(sendUrl(), {
				method: 'POST',
				headers: { ...bearer(), 'content-type': 'application/xml' },
				body: '<a/>',
			}),
		);
		expectErrorBody(xml, 415);
		expect(xml.body.message).toContain('Content-Type application/xml is not supported');
		const json = JSON.stringify(
			textMessage(context.business, contactOf(context.business, { inWindow: true }).phoneNumber),
		);
		const text = await read(
			await fetch(sendUrl(), { method: 'POST', headers: { ...bearer(), 'content-type': 'text/plain' }, body: json }),
		);
		expectErrorBody(text, 415);
		expect(text.body.message).toBe(
			'Content-Type text/plain is not supported: send the body as JSON with Content-Type: application/json',
		);
		// Nothing was sent.
		expect(await admin(context, 'GET', `messages?business=${context.business.id}`)).toEqual([]);
	});

	it('a body sent to an endpoint that takes none is 400 saying so; {} and an empty body are no body', async () => {
		const contact = contactOf(context.business, { inWindow: true });
		for (const key of ['closeContactConversations', 'openContactConversations'] as const) {
			const answer = await call(context, key, { params: { uuid: contact.uuid }, body: { reason: 'spam' } });
			expectErrorBody(answer, 400);
			expect(answer.body.message).toBe(
				`POST /api/external/v2/contacts/:uuid/conversation/${key === 'closeContactConversations' ? 'close' : 'open'} takes no body: send the request without one (an empty body or {} is fine)`,
			);
			expect(answer.body.field).toBe('body');
			expect((await call(context, key, { params: { uuid: contact.uuid }, body: {} })).status).toBe(200);
			expect((await call(context, key, { params: { uuid: contact.uuid }, raw: '' })).status).toBe(200);
		}
	});

	it('a "+" in the B7 phone query is named as the problem, without claiming no lookup method was given', async () => {
		const url = (phone: string) => `${context.sandbox.externalUrl}/conversations?phone=${phone}`;
		const headers = { 'x-api-key': context.business.apiKey };
		const plain = await read(await fetch(url('+4915112340001'), { headers }));
		expectErrorBody(plain, 400);
		expect(plain.body.message).toBe(
			'phone starts with a space, which is how a "+" in a URL query arrives: send 7 to 15 digits with country code and no "+" (e.g. 4915112345678)',
		);
		const encoded = await read(await fetch(url('%2B4915112340001'), { headers }));
		expectErrorBody(encoded, 400);
		expect(encoded.body.message).toBe(
			'phone must not start with "+": send 7 to 15 digits with country code and no "+" (e.g. 4915112345678)',
		);
		expect(encoded.body.field).toBe('phone');
		// A bad field_value with its field_key given is not "field_value is required" either.
		const badValue = await call(context, 'getConversation', { query: { field_key: 'city', field_value: '' } });
		expectErrorBody(badValue, 400);
		expect(badValue.body.message).toBe('field_value must not be empty');
	});

	it('unknown paths and methods are 404 with the error body', async () => {
		const base = context.sandbox.baseUrl;
		for (const [method, path] of [
			['GET', '/'],
			['GET', '/v1'],
			['GET', '/v1/messages'],
			['DELETE', '/v1/messages/send'],
			['GET', '/v2/messages/send'],
			['GET', '/api/external/v2/nope'],
			['DELETE', '/api/external/v2/agents/x'],
			['GET', '/__sandbox/nope'],
		]) {
			const answer = await read(await fetch(`${base}${path}`, { method, headers: bearer() }));
			expectErrorBody(answer, 404);
			expect(answer.body.message).toContain(path);
		}
	});

	it.each(OPERATION_KEYS)('%s answers odd bodies, queries and parameters with a 4xx error body', async (key) => {
		const operation = OPERATIONS[key];
		const valid = validInputs(context)[key];
		const bodies =
			operation.method === 'GET'
				? [undefined]
				: [
						'null',
						'[]',
						'"text"',
						'42',
						'true',
						JSON.stringify({ a: { b: { c: [1, { d: null }] } } }),
						'{"__proto__": {"x": 1}}',
					];
		for (const raw of bodies) {
			const url = new URL(
				operationUrl(context, key, { ...valid, params: { uuid: 'é%20x', agent_id: 'x'.repeat(400) } }),
			);
			url.searchParams.append('limit', '1');
			url.searchParams.append('limit', '2');
			url.searchParams.append('message_limit', '1');
			url.searchParams.append('message_limit', 'x');
			url.searchParams.append('collection_id', '');
			const response = await fetch(url, {
				method: operation.method,
				headers: { ...authHeaders(context, key), ...(raw === undefined ? {} : { 'content-type': 'application/json' }) },
				body: raw,
			});
			const answer = await read(response);
			expect(answer.status).toBeGreaterThanOrEqual(400);
			expect(answer.status).toBeLessThan(500);
			expectErrorBody(answer);
		}
		// Still alive and well (A1's valid input names a message that does not exist: 404).
		expect((await call(context, key, valid)).status).toBe(key === 'getMessageStatus' ? 404 : 200);
	});

	it('a wrong credential is 401 even with a huge body, a wrong content type or invalid JSON', async () => {
		const huge = 'x'.repeat(2 * 1024 * 1024);
		for (const [contentType, body] of [
			['application/json', huge],
			['application/xml', '<a/>'],
			['application/json', '{bad'],
		]) {
			const answer = await read(
				await fetch(sendUrl(), {
					method: 'POST',
					headers: { authorization: 'Bearer nope', 'content-type': contentType },
					body,
				}),
			);
			expectErrorBody(answer, 401);
		}
	});
});

describe('sandbox: admin API, faults, clock, reset, fixture, OpenAPI', () => {
	const context = useSandbox();
	const send = () =>
		call(context, 'sendMessage', {
			body: textMessage(context.business, contactOf(context.business, { inWindow: true }).phoneNumber),
		});
	const status = () => call(context, 'getMessageStatus', { params: { uuid: 'x' } });

	it('the fixture is deterministic: same ids and secrets on every start, and GET fixture equals it', async () => {
		const served = await admin(context, 'GET', 'fixture');
		expect(served).toEqual(context.sandbox.fixture);
		const second = await startSandbox({ port: 0 });
		try {
			expect({ ...second.fixture, baseUrl: '', externalUrl: '' }).toEqual({
				...context.sandbox.fixture,
				baseUrl: '',
				externalUrl: '',
			});
		} finally {
			await second.close();
		}
		expect(served.externalUrl).toBe(`${served.baseUrl}/api/external/v2`);
		expect(served.businesses).toHaveLength(2);
		for (const business of served.businesses) {
			expect(business.apiKey).toMatch(/^live_sbx_/);
			expect(business.templates.map((t: { kind: string }) => t.kind).sort()).toEqual([
				'named',
				'positional',
				'urlButton',
			]);
			expect(business.templates.find((t: { kind: string }) => t.kind === 'urlButton').buttons[0].url).toContain(
				'{{1}}',
			);
			expect(business.contacts.some((c: { inWindow: boolean }) => c.inWindow)).toBe(true);
			expect(business.contacts.some((c: { inWindow: boolean }) => !c.inWindow)).toBe(true);
			expect(business.contacts.some((c: { undeliverable: boolean }) => c.undeliverable)).toBe(true);
			expect(business.collections[0].embedding_fields.length).toBeGreaterThan(0);
			expect(business.agents).toHaveLength(1);
			expect(business.fieldKeys.length).toBeGreaterThan(0);
		}
	});

	it('reset restores the fixture, forgets sent messages, webhooks, faults and the clock offset', async () => {
		const contact = context.business.contacts[0];
		await call(context, 'updateContact', { params: { uuid: contact.uuid }, body: { name: 'Changed Name', tags: [] } });
		await send();
		await admin(context, 'POST', 'webhooks', { business: context.business.id, url: 'http://127.0.0.1:9/x' });
		await admin(context, 'POST', 'faults', { latencyMs: 1 });
		await admin(context, 'POST', 'clock', { advanceMs: 1000 });
		await admin(context, 'POST', 'reset');
		const now = (await call(context, 'updateContact', { params: { uuid: contact.uuid }, body: {} })).body.contact[0];
		expect(now).toMatchObject({ name: contact.name, customFields: contact.customFields });
		expect(await admin(context, 'GET', `messages?business=${context.business.id}`)).toEqual([]);
		expect(await admin(context, 'GET', 'webhooks')).toEqual([]);
		expect(await admin(context, 'GET', 'faults')).toEqual({});
		expect((await admin(context, 'GET', 'clock')).offsetMs).toBe(0);
	});

	it('faults: an error rate with a status, per endpoint, deterministic; DELETE clears', async () => {
		await admin(context, 'POST', 'faults', { endpoint: 'POST /v1/messages/send', errorRate: 1, errorStatus: 503 });
		expectErrorBody(await send(), 503);
		expectErrorBody(await status(), 404);
		await admin(context, 'POST', 'faults', { endpoint: 'POST /v1/messages/send', errorRate: 0.5 });
		const statuses = [];
		for (let i = 0; i < 4; i++) statuses.push((await send()).status);
		expect(statuses).toEqual([200, 500, 200, 500]);
		await admin(context, 'DELETE', 'faults');
		expect((await send()).status).toBe(200);
		// The documented 500 of B7 and B8 (internal error) comes from faults too.
		await admin(context, 'POST', 'faults', { endpoint: 'GET /api/external/v2/conversations', errorRate: 1 });
		await admin(context, 'POST', 'faults', { endpoint: 'POST /api/external/v2/send-template', errorRate: 1 });
		expectErrorBody(await call(context, 'getConversation', { query: { phone: '4915112340001' } }), 500);
		expectErrorBody(await call(context, 'sendTemplate', validInputs(context).sendTemplate), 500);
		await admin(context, 'DELETE', 'faults?endpoint=GET%20%2Fapi%2Fexternal%2Fv2%2Fconversations');
		expect((await call(context, 'getConversation', { query: { phone: '4915112340001' } })).status).toBe(200);
		expectErrorBody(await call(context, 'sendTemplate', validInputs(context).sendTemplate), 500);
		// Failed requests were not accepted.
		expect(await admin(context, 'GET', `messages?business=${context.business.id}`)).toHaveLength(3);
	});

	it('faults: 429 with Retry-After, global unless an endpoint has its own', async () => {
		await admin(context, 'POST', 'faults', { rateLimit: { retryAfterSeconds: 7 } });
		const limited = await send();
		expectErrorBody(limited, 429);
		expect(limited.headers.get('retry-after')).toBe('7');
		expectErrorBody(await status(), 429);
		await admin(context, 'POST', 'faults', { endpoint: 'GET /v1/messages/status/:uuid', latencyMs: 0 });
		expectErrorBody(await status(), 404);
		// Auth still comes first: a wrong credential is 401, not a fault.
		expectErrorBody(await call(context, 'sendMessage', { body: {}, auth: 'none' }), 401);
		// The admin API is never faulted.
		expect(await admin(context, 'GET', 'faults')).toHaveProperty('*');
	});

	it('faults: latency, dropped connections and a requests-per-second limit', async () => {
		await admin(context, 'POST', 'faults', { endpoint: 'GET /v1/messages/status/:uuid', latencyMs: 300 });
		const started = Date.now();
		await status();
		expect(Date.now() - started).toBeGreaterThanOrEqual(280);

		// A template send's log keeps its arrival apart from the message's creation after the latency.
		await admin(context, 'POST', 'faults', { endpoint: 'POST /api/external/v2/send-template', latencyMs: 300 });
		expect((await call(context, 'sendTemplate', validInputs(context).sendTemplate)).status).toBe(200);
		const [logged] = await admin(context, 'GET', `messages?business=${context.business.id}`);
		expect(Date.parse(logged.createdAt) - Date.parse(logged.request.receivedAt)).toBeGreaterThanOrEqual(280);
		await admin(context, 'POST', 'reset');

		await admin(context, 'POST', 'faults', { endpoint: 'POST /v1/messages/send', dropConnection: true });
		await expect(send()).rejects.toThrow();
		expect(await admin(context, 'GET', `messages?business=${context.business.id}`)).toEqual([]);

		await admin(context, 'POST', 'faults', { endpoint: 'POST /v1/messages/send', maxRequestsPerSecond: 3 });
		const answers = await Promise.all(Array.from({ length: 5 }, () => send()));
		expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
		const limited = answers.filter((a) => a.status === 429);
		expect(limited).toHaveLength(2);
		expect(limited[0].headers.get('retry-after')).toBe('1');
	});

	it('GET requests counts the requests each endpoint received since start or reset, refused ones included', async () => {
		const contact = contactOf(context.business, { inWindow: true });
		await send();
		await send();
		await call(context, 'sendMessage', { body: {}, auth: { bearer: 'sbx_at_wrong' } });
		await status();
		await call(context, 'getConversation', { query: { phone: '4915112340001' } });
		await call(context, 'updateContact', { params: { uuid: contact.uuid }, body: {} });
		await admin(context, 'GET', 'fixture');
		const { counts } = await admin(context, 'GET', 'requests');
		expect(counts).toEqual({
			'GET /v1/messages/status/:uuid': 1,
			'POST /v1/messages/send': 3,
			'POST /api/external/v2/search/item': 0,
			'GET /api/external/v2/search/items': 0,
			'PATCH /api/external/v2/contacts/:uuid': 1,
			'GET /api/external/v2/contacts/:uuid/messages': 0,
			'POST /api/external/v2/contacts/:uuid/conversation/close': 0,
			'POST /api/external/v2/contacts/:uuid/conversation/open': 0,
			'GET /api/external/v2/conversations': 1,
			'POST /api/external/v2/send-template': 0,
			'POST /api/external/v2/agents': 0,
			'GET /api/external/v2/agents/:agent_id': 0,
			'PATCH /api/external/v2/agents/:agent_id': 0,
			'PUT /api/external/v2/agents/:agent_id': 0,
		});
		expect(JSON.stringify(counts)).not.toContain(context.business.accessToken);
		// DELETE and reset both start the counts again.
		expect(Object.values((await admin(context, 'DELETE', 'requests')).counts).every((n) => n === 0)).toBe(true);
		await send();
		await admin(context, 'POST', 'reset');
		expect(Object.values((await admin(context, 'GET', 'requests')).counts).every((n) => n === 0)).toBe(true);
	});

	it('GET messages narrows to a business, a time (since) and a sending number (from)', async () => {
		const { business } = context;
		const template = validInputs(context).sendTemplate;
		await send();
		await admin(context, 'POST', 'clock', { advanceMs: 60_000 });
		const { now } = await admin(context, 'GET', 'clock');
		await call(context, 'sendTemplate', {
			...template,
			query: { ...template.query, from_phone_number: business.phoneNumbers[1] },
		});
		await call(context, 'sendMessage', {
			body: textMessage(context.other, contactOf(context.other, { inWindow: true }).phoneNumber),
			as: context.other,
		});
		const list = (query: string) => admin(context, 'GET', `messages?${query}`);
		expect((await list('')).map((m: { business: string }) => m.business)).toEqual([
			business.id,
			business.id,
			context.other.id,
		]);
		expect((await list(`business=${business.id}`)).map((m: { source: string }) => m.source)).toEqual([
			'api',
			'template',
		]);
		const recent = await list(`business=${business.id}&since=${encodeURIComponent(now)}`);
		expect(recent.map((m: { source: string; from: string }) => [m.source, m.from])).toEqual([
			['template', business.phoneNumbers[1]],
		]);
		expect((await list(`from=%2B${business.phoneNumbers[0]}`)).map((m: { source: string }) => m.source)).toEqual([
			'api',
		]);
		expect(await list(`business=${business.id}&since=2999-01-01T00:00:00Z`)).toEqual([]);
		expectErrorBody(await read(await fetch(`${context.sandbox.baseUrl}/__sandbox/messages?since=yesterday`)), 400);
		expectErrorBody(await read(await fetch(`${context.sandbox.baseUrl}/__sandbox/messages?from=abc`)), 400);
	});

	it('refuses bad admin input with 400 (faults, clock, inbound) and unknown businesses with 404', async () => {
		const post = async (path: string, body: unknown) =>
			read(
				await fetch(`${context.sandbox.baseUrl}/__sandbox/${path}`, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify(body),
				}),
			);
		expectErrorBody(await post('faults', { errorStatus: 418 }), 400);
		expectErrorBody(await post('faults', { endpoint: 'send' }), 400);
		expectErrorBody(await post('clock', { advanceMs: -5 }), 400);
		expectErrorBody(await post('inbound', { business: context.business.id, from: 'abc', text: 'x' }), 400);
		expectErrorBody(await post('inbound', { business: 'nope', from: '+4915112340001', text: 'x' }), 404);
		expectErrorBody(await read(await fetch(`${context.sandbox.baseUrl}/__sandbox/messages?business=nope`)), 404);
	});

	it('an inbound message from an unknown number creates the contact and opens its window', async () => {
		await admin(context, 'POST', 'inbound', {
			business: context.business.id,
			from: '+49 170 0000 777',
			text: 'new here',
		});
		const lookup = await call(context, 'getConversation', { query: { phone: '491700000777' } });
		expect(lookup.status).toBe(200);
		expect((await call(context, 'sendMessage', { body: textMessage(context.business, '+491700000777') })).status).toBe(
			200,
		);
	});

	it('serves an OpenAPI 3.1 document generated from the contract, one operation per SPEC endpoint', async () => {
		const document = await read(await fetch(`${context.sandbox.baseUrl}/openapi.json`));
		expect(document.status).toBe(200);
		expect(document.body.openapi).toBe('3.1.0');
		for (const key of OPERATION_KEYS) {
			const operation = OPERATIONS[key];
			const prefix = operation.api === 'messaging' ? '/v1' : '/api/external/v2';
			const path = `${prefix}${operation.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`;
			const entry = document.body.paths[path]?.[operation.method.toLowerCase()];
			expect(entry).toMatchObject({
				operationId: key,
				responses: { 200: expect.any(Object), 401: expect.any(Object) },
			});
			if (operation.method !== 'GET' && key !== 'closeContactConversations' && key !== 'openContactConversations') {
				expect(entry.requestBody.content['application/json'].schema).toEqual(
					expect.objectContaining({ type: 'object' }),
				);
			}
		}
		expect(
			document.body.paths['/v1/messages/send'].post.requestBody.content['application/json'].schema.required,
		).toEqual(expect.arrayContaining(['to', 'from', 'type', 'content', 'channel_uuid']));
		expect(Object.keys(document.body.components.securitySchemes).sort()).toEqual(['apiKeyAuth', 'bearerAuth']);
	});
});
