/**
 * The runner's one table from an answer to an outcome. Each row is a promise of the issue's
 * guarantee 4; the integration tests show them against the sandbox, this shows every row.
 */
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { classify, classifyNetworkError, ConvoService } from '../../runner/src/service';
import { freePort } from '../../runner/src/devRedis';

const stopOn = { 403: 'the template belongs to another business' };
const body = (message: string) => ({ status: 0, code: 'x', message });

test.each([
	[200, {}, 'ok'],
	[429, { 'retry-after': '3' }, 'hold'],
	[500, {}, 'retry'],
	[503, {}, 'retry'],
	[408, {}, 'retry'],
	[401, {}, 'stop'],
	[403, {}, 'stop'],
	[400, {}, 'refused'],
	[404, {}, 'refused'],
	[409, {}, 'refused'],
])('%i is %s', (status, headers, kind) => {
	expect(classify(status, body('said'), headers, stopOn).kind).toBe(kind === 'ok' ? 'ok' : kind);
});

test('a 429 holds for Retry-After (seconds or a date), 1 s when absent, at most 5 minutes', () => {
	expect(classify(429, undefined, { 'retry-after': '3' }, {})).toMatchObject({ kind: 'hold', waitMs: 3000 });
	expect(classify(429, undefined, {}, {})).toMatchObject({ kind: 'hold', waitMs: 1000 });
	expect(classify(429, undefined, { 'retry-after': '86400' }, {})).toMatchObject({ kind: 'hold', waitMs: 300_000 });
	const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
	const held = classify(429, undefined, { 'retry-after': inTwoSeconds }, {});
	expect(held.kind === 'hold' && held.waitMs > 500 && held.waitMs <= 2000).toBe(true);
});

test("a refusal carries the service's message; a stop names what to fix", () => {
	expect(classify(400, body('2 is required'), {}, stopOn)).toMatchObject({
		kind: 'refused',
		reason: '400: 2 is required',
	});
	// Every call stops on a refused key, whatever else its caller stops on.
	expect(classify(401, body('bad key'), {}, {})).toMatchObject({
		kind: 'stop',
		reason: expect.stringContaining('check CONVO_API_KEY'),
	});
});

describe("a campaign's send: what the service refuses whoever the recipient pauses campaigns instead", () => {
	const refusal = (status: number, message: string, field?: string) =>
		classify(status, { status, code: 'x', message, ...(field ? { field } : {}) }, {}, stopOn, true);

	test('a blocked send names the template or the number by its field; a streak of them pauses', () => {
		expect(refusal(400, 'blocked send: template order_update is paused for its quality', 'template_id')).toEqual({
			kind: 'blocked',
			status: 400,
			refusal: 'template_refused',
			atOnce: false,
			message: 'blocked send: template order_update is paused for its quality',
			reason:
				'400: the template cannot be sent now (the service said: blocked send: template order_update is paused for its quality)',
		});
		expect(refusal(400, 'blocked send: phone number 4930 cannot send messages now', 'from_phone_number')).toMatchObject(
			{ kind: 'blocked', refusal: 'number_refused', atOnce: false },
		);
	});

	test('the messaging limit holds the number; any other 400 is a refusal of this recipient', () => {
		expect(refusal(400, 'blocked send: the business reached its messaging limit', 'phone')).toMatchObject({
			kind: 'limited',
			reason: '400: blocked send: the business reached its messaging limit',
		});
		expect(refusal(400, '2 is required', 'template_id').kind).toBe('refused');
		expect(refusal(400, 'blocked send: something new', 'buttons').kind).toBe('refused');
	});

	test('403 and 401 pause at once; a 403 for the agent and a 404 still fail the campaign', () => {
		expect(refusal(403, 'template_id: the template x belongs to another business', 'template_id')).toMatchObject({
			kind: 'blocked',
			refusal: 'template_refused',
			atOnce: true,
		});
		expect(refusal(403, 'the number is not one of this business', 'from_phone_number')).toMatchObject({
			refusal: 'number_refused',
			atOnce: true,
		});
		expect(refusal(403, 'refused')).toMatchObject({ refusal: 'template_refused', atOnce: true });
		expect(refusal(401, 'bad key')).toMatchObject({
			kind: 'blocked',
			refusal: 'unauthorized',
			atOnce: true,
			reason: expect.stringContaining('check CONVO_API_KEY'),
		});
		expect(refusal(403, 'agent_id: the agent belongs to another business', 'agent_id').kind).toBe('stop');
		expect(classify(404, body('no template'), {}, { 404: 'no such template' }, true).kind).toBe('stop');
		// Other calls than a campaign's sends are as before: a 401 stops them.
		expect(classify(401, body('bad key'), {}, {}).kind).toBe('stop');
	});
});

test('only connection errors that prove nothing was written are retried; the rest are unknown', () => {
	for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT'])
		expect(classifyNetworkError(Object.assign(new Error(code), { code })).kind).toBe('retry');
	for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE'])
		expect(classifyNetworkError(Object.assign(new Error(code), { code })).kind).toBe('unknown');
	expect(classifyNetworkError(Object.assign(new Error('timed out'), { name: 'TimeoutError' })).kind).toBe('unknown');
});

describe('ConvoService against real sockets', () => {
	const input = {
		query: { template_id: '3f4bc6d6-5048-4a60-85ba-1afccb00f004', from_phone_number: '493010020000' },
		body: { phone: '4917012345678' },
	};

	test('nothing listening: retry (the request never left)', async () => {
		const port = await freePort();
		const service = new ConvoService({
			externalUrl: `http://127.0.0.1:${port}/api/external/v2`,
			apiKey: 'live_secret',
			deadlineMs: 2000,
		});
		expect((await service.sendTemplate(input)).kind).toBe('retry');
		await service.close();
	});

	test('a server that reads the request and never answers: unknown at the deadline, the key in no reason', async () => {
		const server = createServer(() => undefined);
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const service = new ConvoService({
			externalUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/external/v2`,
			apiKey: 'live_secret',
			deadlineMs: 300,
		});
		const outcome = await service.sendTemplate(input);
		expect(outcome.kind).toBe('unknown');
		expect(JSON.stringify(outcome)).not.toContain('live_secret');
		await service.close();
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	});

	test('a server that drops the connection after reading the request: unknown', async () => {
		const server = createServer((request) => request.socket.destroy());
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const service = new ConvoService({
			externalUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/external/v2`,
			apiKey: 'live_secret',
			deadlineMs: 2000,
		});
		expect((await service.sendTemplate(input)).kind).toBe('unknown');
		await service.close();
		await new Promise((resolve) => server.close(resolve));
	});
	test('input the contract refuses: the call rejects naming the field, nothing is sent, nothing reads as a failed connection', async () => {
		let requests = 0;
		const server = createServer((_request, response) => {
			requests++;
			response.end('{}');
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const service = new ConvoService({
			externalUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/external/v2`,
			apiKey: 'live_secret',
			deadlineMs: 2000,
		});
		try {
			const item = { collection_id: 'not-a-uuid', external_id: 'sku-1', item: { name: 'a' } };
			await expect(service.call('upsertSearchItem', { body: item })).rejects.toMatchObject({
				name: 'ContractError',
				message: expect.stringContaining('collection_id'),
			});
			await expect(service.open('listSearchItems', { query: { collection_id: 'not-a-uuid' } })).rejects.toMatchObject({
				name: 'ContractError',
			});
			expect(requests).toBe(0);
		} finally {
			await service.close();
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
});

describe("a send under the process's long-lived stop signal", () => {
	/** The stop signal's dependants (Node keeps one per AbortSignal.any() composite that follows it). */
	const dependantsOf = (signal: AbortSignal) => {
		const symbol = Object.getOwnPropertySymbols(signal).find((each) => each.description === 'kDependantSignals');
		return symbol ? ((signal as unknown as Record<symbol, Set<unknown> | undefined>)[symbol]?.size ?? 0) : 0;
	};

	test('keeps nothing on it once each send has ended, answered or at its deadline; a stop aborts a send in flight', async () => {
		let hang = false;
		const server = createServer((_request, response) => {
			if (!hang) response.end(JSON.stringify({ message: { uuid: 'm', status: 'enqueued' } }));
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const service = new ConvoService({
			externalUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/external/v2`,
			apiKey: 'live_secret',
			deadlineMs: 300,
		});
		const stop = new AbortController();
		const send = service.templateSender({
			template_id: '3f4bc6d6-5048-4a60-85ba-1afccb00f004',
			from_phone_number: '493010020000',
		});
		try {
			for (let i = 0; i < 300; i++)
				expect((await send({ phone: '4917012345678' }, stop.signal)).kind).not.toBe('retry');
			hang = true;
			expect((await send({ phone: '4917012345678' }, stop.signal)).kind).toBe('unknown');
			// Every send has ended: the stop signal holds none of them.
			expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
			expect(dependantsOf(stop.signal)).toBe(0);
			const inFlight = send({ phone: '4917012345678' }, stop.signal);
			stop.abort();
			expect((await inFlight).kind).toBe('unknown');
		} finally {
			await service.close();
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
});
