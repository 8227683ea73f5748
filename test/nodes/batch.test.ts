import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject } from 'n8n-workflow';

import { admin, credentialsOf, runConvo, sentMessages, useSandbox } from './support';

const BAD = 37;

describe('Convo node: many items with Continue On Fail', () => {
	const context = useSandbox();
	const inWindow = () => context.business.contacts.find((c) => c.inWindow && !c.undeliverable)!;
	const outOfWindow = () => context.business.contacts.find((c) => !c.inWindow && !c.undeliverable)!;
	const sendEach = (requestsAtOnce: number) => ({
		resource: 'message',
		operation: 'send',
		channelUuid: context.business.channelUuid,
		channelType: 'whatsapp',
		to: '={{ $json.to }}',
		messageType: 'text',
		text: '={{ $json.text }}',
		batching: { requestsAtOnce },
	});
	const items = (bad: IDataObject) =>
		Array.from({ length: 100 }, (_, i) =>
			i === BAD ? { ...bad, text: `msg ${i}` } : { to: inWindow().phoneNumber, text: `msg ${i}` },
		);

	async function expectOneErrorAnd99Sent(json: IDataObject[], pairedItems: unknown[]) {
		expect(json).toHaveLength(100);
		// Output order is input order, each item paired to its input.
		expect(pairedItems).toEqual(Array.from({ length: 100 }, (_, i) => ({ item: i })));
		const errors = json.map((item, i) => (item.error ? i : -1)).filter((i) => i >= 0);
		expect(errors).toEqual([BAD]);
		expect(json.filter((item) => item.messageId)).toHaveLength(99);

		const texts = (await sentMessages(context)).map((message) => message.text);
		expect(texts).toHaveLength(99);
		expect(new Set(texts).size).toBe(99);
		expect(texts).not.toContain(`msg ${BAD}`);
	}

	it('sends 99 of 100 one at a time; the item that is not a phone number becomes an error item', async () => {
		const result = await runConvo(context, sendEach(1), {
			items: items({ to: 'not a phone' }),
			node: { onError: 'continueRegularOutput' },
		});
		expect(result.errorOf('Convo')).toBeUndefined();
		await expectOneErrorAnd99Sent(
			result.json,
			result.output.map((item) => item.pairedItem),
		);
		expect(result.json[BAD].error).toContain('To "not a phone" is not a phone number');
		// In order one at a time: the service saw the texts in input order.
		const texts = (await sentMessages(context)).map((message) => message.text);
		expect(texts).toEqual(
			items({})
				.map((item) => item.text)
				.filter((text) => text !== `msg ${BAD}`),
		);
	});

	it('with Requests at Once = 10 keeps the output order; a refusal of the service becomes the error item', async () => {
		const result = await runConvo(context, sendEach(10), {
			items: items({ to: outOfWindow().phoneNumber }),
			node: { onError: 'continueRegularOutput' },
		});
		expect(result.errorOf('Convo')).toBeUndefined();
		await expectOneErrorAnd99Sent(
			result.json,
			result.output.map((item) => item.pairedItem),
		);
		expect(result.json[BAD]).toMatchObject({
			error: expect.stringMatching(/^The service refused the request/),
			httpCode: 400,
		});
	});

	it('Requests at Once really overlaps the calls, never more than asked', async () => {
		// A pass-through proxy counts how many calls are open at once; 50 ms of latency at the
		// service keeps each call open long enough for the next ones to start beside it. The counts are
		// the assertion, not the time taken.
		let open = 0;
		let mostOpen = 0;
		const proxy = createServer((request, response) => {
			open++;
			mostOpen = Math.max(mostOpen, open);
			const chunks: Buffer[] = [];
			request.on('data', (chunk: Buffer) => chunks.push(chunk));
			request.on('end', () => {
				void fetch(`${context.sandbox.baseUrl}${request.url}`, {
					method: request.method,
					headers: { authorization: String(request.headers.authorization), 'content-type': 'application/json' },
					body: Buffer.concat(chunks),
				}).then(async (upstream) => {
					const body = await upstream.text();
					open--;
					response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(body);
				});
			});
		});
		await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
		const { port } = proxy.address() as AddressInfo;
		await admin(context.sandbox, 'POST', 'faults', { endpoint: 'POST /v1/messages/send', latencyMs: 150 });
		try {
			const credentials = { ...credentialsOf(context.sandbox, context.business) };
			credentials.convoApi = { ...credentials.convoApi, baseUrl: `http://127.0.0.1:${port}` };
			const twenty = items({ to: inWindow().phoneNumber }).slice(0, 20);

			const tenAtOnce = await runConvo(context, sendEach(10), { items: twenty, credentials });
			expect(tenAtOnce.json.filter((item) => item.messageId)).toHaveLength(20);
			expect(mostOpen).toBeGreaterThan(1);
			expect(mostOpen).toBeLessThanOrEqual(10);

			mostOpen = 0;
			const oneAtATime = await runConvo(context, sendEach(1), { items: twenty.slice(0, 5), credentials });
			expect(oneAtATime.json.filter((item) => item.messageId)).toHaveLength(5);
			expect(mostOpen).toBe(1);
		} finally {
			await admin(context.sandbox, 'DELETE', 'faults');
			await new Promise((resolve) => proxy.close(resolve));
		}
	});

	it('without Continue On Fail and 5 at once, starts no item after the failure: those in flight finish, then it fails', async () => {
		// 40 items, the 3rd not a phone number. The five workers take items 0 to 4 at once; item 2
		// fails before sending, the other four were already on their way.
		const forty = items({})
			.slice(0, 40)
			.map((item, i) => (i === 2 ? { ...item, to: 'x' } : item));
		const result = await runConvo(context, sendEach(5), { items: forty });
		expect(result.errorOf('Convo')?.message).toContain('To "x"');
		const texts = (await sentMessages(context)).map((message) => message.text).sort();
		expect(texts).toEqual(['msg 0', 'msg 1', 'msg 3', 'msg 4']);
	});

	it('without Continue On Fail stops at the bad item', async () => {
		const result = await runConvo(context, sendEach(1), { items: items({ to: 'x' }).slice(0, 40) });
		expect(result.errorOf('Convo')?.message).toContain('To "x"');
		expect((await sentMessages(context)).length).toBe(BAD);
	});
});
