import { buildRequest, ContractError, LIMITS, OPERATIONS, type OperationInput } from 'convo-contract';

const UUID = '3b0c3f0e-8c1a-4f6e-9d2b-6a1f0c9e7d21';

function rejection(operation: (typeof OPERATIONS)[keyof typeof OPERATIONS], input: OperationInput): ContractError {
	try {
		buildRequest(operation, input);
	} catch (error) {
		if (error instanceof ContractError) return error;
		throw error;
	}
	throw new Error('expected a ContractError, but the input was accepted');
}

const send = (metadata: Record<string, string>): OperationInput => ({
	body: { to: '+4915112345678', from: 'whatsapp', type: 'text', content: { text: 'Hi' }, channel_uuid: UUID, metadata },
});
const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`key${i}`, `value${i}`]));

describe('SPEC section 8: metadata on POST /messages/send', () => {
	test('the limits are the documented ones', () => {
		expect([LIMITS.metadataPairs, LIMITS.metadataKeyLength, LIMITS.metadataValueLength]).toEqual([10, 50, 500]);
	});

	test('10 pairs are accepted; 11 are rejected with the limit in the message', () => {
		expect(buildRequest(OPERATIONS.sendMessage, send(pairs(10))).body).toMatchObject({ metadata: pairs(10) });
		const error = rejection(OPERATIONS.sendMessage, send(pairs(11)));
		expect(error.issues).toEqual([expect.objectContaining({ field: 'metadata' })]);
		expect(error.message).toBe('metadata has 11 pairs; at most 10');
	});

	test('a 50-character key is accepted; 51 characters are rejected', () => {
		expect(() => buildRequest(OPERATIONS.sendMessage, send({ ['k'.repeat(50)]: 'v' }))).not.toThrow();
		const error = rejection(OPERATIONS.sendMessage, send({ ['k'.repeat(51)]: 'v' }));
		expect(error.issues[0].field).toBe('metadata');
		expect(error.message).toContain('is 51 characters; at most 50');
	});

	test('a 500-character value is accepted; 501 characters are rejected', () => {
		expect(() => buildRequest(OPERATIONS.sendMessage, send({ note: 'v'.repeat(500) }))).not.toThrow();
		const error = rejection(OPERATIONS.sendMessage, send({ note: 'v'.repeat(501) }));
		expect(error.issues[0].field).toBe('metadata.note');
		expect(error.message).toBe('metadata.note value is 501 characters; at most 500');
	});
});

describe('SPEC section 8: message_limit on GET /conversations', () => {
	const lookup = (message_limit?: unknown) => ({ query: { phone: '4915112345678', message_limit } });

	test('absent (the service defaults to 50) and 200 are accepted', () => {
		expect(LIMITS.conversationMessageLimit).toEqual({ default: 50, max: 200 });
		expect(buildRequest(OPERATIONS.getConversation, lookup()).query).toEqual({ phone: '4915112345678' });
		expect(buildRequest(OPERATIONS.getConversation, lookup(200)).query).toMatchObject({ message_limit: 200 });
	});

	test('201 is rejected with the limit in the message', () => {
		expect(rejection(OPERATIONS.getConversation, lookup(201)).message).toBe('message_limit is 201; at most 200');
	});

	test('0 and fractions are rejected', () => {
		expect(rejection(OPERATIONS.getConversation, lookup(0)).message).toBe('message_limit must be at least 1');
		expect(rejection(OPERATIONS.getConversation, lookup(2.5)).issues[0].field).toBe('message_limit');
	});
});

describe('SPEC section 8: limit on GET /contacts/:uuid/messages', () => {
	const messages = (limit?: unknown) => ({ params: { uuid: UUID }, query: { limit } });

	test('absent (the service defaults to 100) and 200 are accepted', () => {
		expect(LIMITS.contactMessagesLimit).toEqual({ default: 100, max: 200 });
		expect(buildRequest(OPERATIONS.getContactMessages, messages()).query).toEqual({});
		expect(buildRequest(OPERATIONS.getContactMessages, messages(200)).query).toEqual({ limit: 200 });
	});

	test('201 is rejected with the limit in the message', () => {
		expect(rejection(OPERATIONS.getContactMessages, messages(201)).message).toBe('limit is 201; at most 200');
	});
});

describe('B7 lookup rules', () => {
	const get = (query: Record<string, unknown>) => buildRequest(OPERATIONS.getConversation, { query });

	test('phone alone, a field pair alone, and both together are accepted', () => {
		expect(get({ phone: '4915112345678' }).query).toEqual({ phone: '4915112345678' });
		expect(get({ field_key: 'customer_id', field_value: 'C-1' }).query).toEqual({
			field_key: 'customer_id',
			field_value: 'C-1',
		});
		expect(get({ phone: '4915112345678', field_key: 'customer_id', field_value: 'C-1' }).query).toMatchObject({
			phone: '4915112345678',
			field_key: 'customer_id',
		});
	});

	test('field_key without field_value is rejected naming field_value', () => {
		const error = rejection(OPERATIONS.getConversation, {
			query: { phone: '4915112345678', field_key: 'customer_id' },
		});
		expect(error.issues).toEqual([expect.objectContaining({ field: 'field_value' })]);
		expect(error.message).toBe('field_value is required when field_key is given');
	});

	test('field_value without field_key is rejected naming field_key', () => {
		const error = rejection(OPERATIONS.getConversation, { query: { field_value: 'C-1' } });
		expect(error.issues).toEqual([expect.objectContaining({ field: 'field_key' })]);
		expect(error.message).toBe('field_key is required when field_value is given');
	});

	test('no lookup method at all is rejected', () => {
		expect(rejection(OPERATIONS.getConversation, { query: {} }).message).toBe(
			'query needs at least one lookup method: phone, or field_key with field_value',
		);
		expect(rejection(OPERATIONS.getConversation, { query: { message_limit: 10 } }).message).toContain(
			'at least one lookup method',
		);
	});

	test('the phone is digits with country code and no "+"', () => {
		expect(rejection(OPERATIONS.getConversation, { query: { phone: '+4915112345678' } }).issues[0].field).toBe('phone');
	});
});
