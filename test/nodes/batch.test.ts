import type { IDataObject } from 'n8n-workflow';

import { admin, runConvo, sentMessages, useSandbox } from './support';

const BAD = 37;

describe('Convo node: many items with Continue On Fail', () => {
	const context = useSandbox();
	const inWindow = () => context.business.contacts.find((c) => c.inWindow && !c.undeliverable)!;
	const outOfWindow = () => context.business.contacts.find((c) => !c.inWindow && !c.undeliverable)!;
	const sendEach = (requestsAtOnce: number) => ({
		resource: 'message',
		operation: 'send',
		channelUuid: context.business.channelUuid,
		from: 'whatsapp',
		to: '={{ $json.to }}',
		messageType: 'text',
		text: '={{ $json.text }}',
		batching: { requestsAtOnce },
	});
	const items = (bad: IDataObject) =>
		Array.from({ length: 100 }, (_, i) => (i === BAD ? { ...bad, text: `msg ${i}` } : { to: inWindow().phoneNumber, text: `msg ${i}` }));

	async function expectOneErrorAnd99Sent(json: IDataObject[], pairedItems: unknown[]) {
		expect(json).toHaveLength(100);
		// Output order is input order, each item paired to its input.
		expect(pairedItems).toEqual(Array.from({ length: 100 }, (_, i) => ({ item: i })));
		const errors = json.map((item, i) => (item.error ? i : -1)).filter((i) => i >= 0);
		expect(errors).toEqual([BAD]);
		expect(json.filter((item) => item.uuid)).toHaveLength(99);

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
		await expectOneErrorAnd99Sent(result.json, result.output.map((item) => item.pairedItem));
		expect(result.json[BAD].error).toContain('To "not a phone" is not a phone number');
		// In order one at a time: the service saw the texts in input order.
		const texts = (await sentMessages(context)).map((message) => message.text);
		expect(texts).toEqual(items({}).map((item) => item.text).filter((text) => text !== `msg ${BAD}`));
	});

	it('with Requests at Once = 10 keeps the output order; a refusal of the service becomes the error item', async () => {
		const result = await runConvo(context, sendEach(10), {
			items: items({ to: outOfWindow().phoneNumber }),
			node: { onError: 'continueRegularOutput' },
		});
		expect(result.errorOf('Convo')).toBeUndefined();
		await expectOneErrorAnd99Sent(result.json, result.output.map((item) => item.pairedItem));
		expect(result.json[BAD]).toMatchObject({ error: expect.stringMatching(/^The service refused the request/), httpCode: '400' });
	});

	it('Requests at Once overlaps the round trips instead of making them one after another', async () => {
		// 100 ms per call: 20 items take 2 s one at a time, about 0.2 s ten at a time.
		await admin(context.sandbox, 'POST', 'faults', { endpoint: 'POST /v1/messages/send', latencyMs: 100 });
		try {
			const started = Date.now();
			const result = await runConvo(context, sendEach(10), { items: items({ to: inWindow().phoneNumber }).slice(0, 20) });
			const elapsed = Date.now() - started;
			expect(result.json.filter((item) => item.uuid)).toHaveLength(20);
			expect(elapsed).toBeLessThan(1000);
		} finally {
			await admin(context.sandbox, 'DELETE', 'faults');
		}
	});

	it('without Continue On Fail stops at the bad item', async () => {
		const result = await runConvo(context, sendEach(1), { items: items({ to: 'x' }).slice(0, 40) });
		expect(result.errorOf('Convo')?.message).toContain('To "x"');
		expect((await sentMessages(context)).length).toBe(BAD);
	});
});
