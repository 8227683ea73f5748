import type { IDataObject } from 'n8n-workflow';

import { runConvo, sentMessages, useSandbox, TEXT_SEND_FROM_ITEM } from './support';

// n8n's node setting "On Error": Continue (using regular output) and Continue (using error output).
describe('Convo node: On Error settings', () => {
	const context = useSandbox();
	const BAD = 2;
	const inWindow = () => context.business.contacts.find((c) => c.inWindow && !c.undeliverable)!;
	const outOfWindow = () => context.business.contacts.find((c) => !c.inWindow && !c.undeliverable)!;
	const send = TEXT_SEND_FROM_ITEM;
	// Item 2 goes to a contact outside the customer-care window: the service refuses it with 400.
	const items = (): IDataObject[] =>
		Array.from({ length: 5 }, (_, i) => ({
			channel: context.business.channelUuid,
			to: i === BAD ? outOfWindow().phoneNumber : inWindow().phoneNumber,
			text: `msg ${i}`,
		}));
	const refusal = {
		error: expect.stringMatching(/^The service refused the request/),
		httpCode: 400,
		description: expect.any(String),
	};

	it('Continue (using regular output): the failed item stays in place on the main output, paired to its input, httpCode a number', async () => {
		const result = await runConvo(context, send, { items: items(), node: { onError: 'continueRegularOutput' } });
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(result.output.map((item) => item.pairedItem)).toEqual([0, 1, 2, 3, 4].map((item) => ({ item })));
		expect(result.json[BAD]).toEqual(refusal);
		expect(result.json.filter((json) => json.messageId)).toHaveLength(4);
		expect(result.outputOf('Convo', 1)).toEqual([]);
	});

	it('Continue (using error output): good items leave on output 0, the failed one on output 1 with its input and pairing', async () => {
		const result = await runConvo(context, send, { items: items(), node: { onError: 'continueErrorOutput' } });
		expect(result.errorOf('Convo')).toBeUndefined();
		const good = result.outputOf('Convo', 0);
		expect(good.map((item) => item.pairedItem)).toEqual([0, 1, 3, 4].map((item) => ({ item })));
		expect(good.every((item) => typeof item.json.messageId === 'string' && item.json.error === undefined)).toBe(true);

		const failed = result.outputOf('Convo', 1);
		expect(failed).toHaveLength(1);
		expect(failed[0].pairedItem).toEqual({ item: BAD });
		// n8n adds the input's fields to an error output item; the guidance is under `details`.
		const { error, ...details } = refusal;
		expect(failed[0].json).toEqual({ ...items()[BAD], error, details });
		expect((await sentMessages(context)).map((message) => message.text).sort()).toEqual([
			'msg 0',
			'msg 1',
			'msg 3',
			'msg 4',
		]);
	});

	it('Continue (using error output) with several at once keeps each output in input order', async () => {
		const result = await runConvo(
			context,
			{ ...send, batching: { requestsAtOnce: 3 } },
			{
				items: items(),
				node: { onError: 'continueErrorOutput' },
			},
		);
		expect(result.outputOf('Convo', 0).map((item) => item.pairedItem)).toEqual([0, 1, 3, 4].map((item) => ({ item })));
		expect(result.outputOf('Convo', 1).map((item) => item.pairedItem)).toEqual([{ item: BAD }]);
	});
});
