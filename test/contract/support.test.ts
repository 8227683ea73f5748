import {
	apiRoot,
	backoffMs,
	errorBody,
	errorDisposition,
	explainServiceError,
	isServiceErrorBody,
	messageCreatedEventSchema,
	OPERATIONS,
	parsePhoneNumber,
	requestUrl,
	retryAfterMs,
	retryDelay,
	serviceErrorMessage,
	toApiDigits,
} from 'convo-contract';

describe('phone numbers', () => {
	test.each([
		['+49 151 1234-5678', '4915112345678'],
		['0049 (151) 12345678', '4915112345678'],
		['1.415.555.0100', '14155550100'],
		['4915112345678', '4915112345678'],
	])('%s is read as %s', (typed, digits) => {
		expect(toApiDigits(typed)).toBe(digits);
	});

	test.each([
		['', 'is empty'],
		['call me', 'is not a phone number'],
		['+49 151 12ab', 'is not a phone number'],
		['12345', 'has 5 digits'],
		['1234567890123456', 'has 16 digits'],
	])('"%s" is refused: %s', (typed, reason) => {
		const parsed = parsePhoneNumber(typed);
		expect(parsed.ok).toBe(false);
		if (!parsed.ok) expect(parsed.reason).toContain(reason);
	});
});

describe('API roots', () => {
	test.each([
		['https://api.example.com', 'https://api.example.com/v1'],
		['https://api.example.com/', 'https://api.example.com/v1'],
		['https://api.example.com/v1', 'https://api.example.com/v1'],
		['https://api.example.com/v1/v1/', 'https://api.example.com/v1'],
	])('messaging %s -> %s', (typed, root) => expect(apiRoot('messaging', typed)).toBe(root));

	test.each([
		['https://api.example.com/api/external/v2', 'https://api.example.com/api/external/v2'],
		['https://api.example.com/api/external/v2/', 'https://api.example.com/api/external/v2'],
		['https://api.example.com', 'https://api.example.com/api/external/v2'],
	])('external %s -> %s', (typed, root) => expect(apiRoot('external', typed)).toBe(root));

	test('a full URL carries the query', () => {
		const url = requestUrl('external', 'https://h.example/', {
			method: 'GET',
			path: '/conversations',
			query: { phone: '4915112345678', message_limit: 5 },
		});
		expect(url).toBe('https://h.example/api/external/v2/conversations?phone=4915112345678&message_limit=5');
	});
});

describe('service errors', () => {
	test('the error body names status, code, message and field', () => {
		expect(errorBody(400, 'metadata has 11 pairs; at most 10', 'metadata')).toEqual({
			status: 400,
			code: 'validation_failed',
			message: 'metadata has 11 pairs; at most 10',
			field: 'metadata',
		});
	});

	test('the message is found in bodies of other shapes too', () => {
		expect(serviceErrorMessage({ error: { message: 'nested' } })).toBe('nested');
		expect(serviceErrorMessage({ detail: 'detail here' })).toBe('detail here');
		expect(serviceErrorMessage('  plain text ')).toBe('plain text');
		expect(serviceErrorMessage({})).toBeUndefined();
	});

	test('401 points at the credential of the API that refused', () => {
		expect(explainServiceError(OPERATIONS.updateContact, 401, errorBody(401, 'invalid key')).description).toContain(
			'Check the API key in the Convo External API credential',
		);
		expect(explainServiceError(OPERATIONS.sendMessage, 401, errorBody(401, 'invalid token')).description).toContain(
			'Check the access token in the Convo API credential',
		);
	});

	test('403 on a template send says the template belongs to another business', () => {
		expect(explainServiceError(OPERATIONS.sendTemplate, 403, errorBody(403, 'not yours')).message).toContain(
			'belongs to another business',
		);
		expect(explainServiceError(OPERATIONS.getAgent, 403, errorBody(403, 'not yours')).message).toBe(
			'This agent belongs to another business (403)',
		);
	});

	test('404 names the identifier that was not found', () => {
		const uuid = '3b0c3f0e-8c1a-4f6e-9d2b-6a1f0c9e7d21';
		expect(
			explainServiceError(OPERATIONS.closeContactConversations, 404, errorBody(404, 'no contact'), { params: { uuid } })
				.message,
		).toBe(`No contact with uuid ${uuid} (404)`);
	});

	test("an error answer without the service's JSON error body points at the credential's URL, not at the record", () => {
		const uuid = '3b0c3f0e-8c1a-4f6e-9d2b-6a1f0c9e7d21';
		for (const body of ['<html>Not Found</html>', { message: 'Not Found' }, {}, undefined]) {
			const explained = explainServiceError(OPERATIONS.updateContact, 404, body, { params: { uuid } });
			expect(explained.message).toMatch(
				/^The URL in the Convo External API credential does not look like the Convo service/,
			);
			expect(explained.message).not.toContain(uuid);
		}
		expect(isServiceErrorBody(errorBody(404, 'no contact'), 404)).toBe(true);
		expect(isServiceErrorBody(errorBody(404, 'no contact'), 401)).toBe(false);
		// A 5xx or 429 from a proxy in front of the service stays a retryable service failure.
		expect(explainServiceError(OPERATIONS.updateContact, 502, '<html>Bad Gateway</html>').message).toContain(
			'The service answered 502',
		);
	});

	test('409 on conversation lookup asks for the other lookup field', () => {
		expect(explainServiceError(OPERATIONS.getConversation, 409, errorBody(409, 'two match')).description).toContain(
			'Add the other lookup field',
		);
	});

	test("400 shows the service's own message", () => {
		expect(
			explainServiceError(OPERATIONS.upsertSearchItem, 400, errorBody(400, 'item is required', 'item')).message,
		).toBe('The service refused the request: item is required');
	});

	test('what may be retried: 429 waits, 5xx retries, the rest is permanent', () => {
		expect(errorDisposition(429)).toBe('rate_limited');
		expect(errorDisposition(503)).toBe('retry');
		expect(errorDisposition(500)).toBe('retry');
		expect(errorDisposition(400)).toBe('permanent');
		expect(errorDisposition(404)).toBe('permanent');
		expect(explainServiceError(OPERATIONS.sendTemplate, 429, {}, { retryAfterSeconds: 7 }).description).toContain(
			'7 seconds',
		);
	});

	test('retry policy: Retry-After is honoured within bounds; only failures that prove nothing was done are retried', () => {
		const fresh = { attempts: 1, rateLimited: 1, rateLimitWaitedMs: 0 };
		expect(retryAfterMs('2')).toBe(2000);
		expect(retryAfterMs(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThan(3000);
		expect(retryDelay({ kind: 'status', status: 429, retryAfter: '1' }, fresh)).toBe(1000);
		expect(retryDelay({ kind: 'status', status: 429 }, fresh)).toBe(1000);
		expect(retryDelay({ kind: 'status', status: 429 }, { ...fresh, rateLimited: 3 })).toBe(4000);
		expect(retryDelay({ kind: 'status', status: 429, retryAfter: '3600' }, fresh)).toBeUndefined();
		expect(
			retryDelay({ kind: 'status', status: 429, retryAfter: '5' }, { ...fresh, rateLimitWaitedMs: 58_000 }),
		).toBeUndefined();
		expect(retryDelay({ kind: 'status', status: 503 }, fresh)).toBe(500);
		expect(retryDelay({ kind: 'status', status: 503 }, { ...fresh, attempts: 3 })).toBeUndefined();
		expect(retryDelay({ kind: 'status', status: 400 }, fresh)).toBeUndefined();
		expect(retryDelay({ kind: 'connection', code: 'ECONNREFUSED' }, fresh)).toBe(500);
		// A reset after the request was written may have been acted on: never repeated blindly.
		expect(retryDelay({ kind: 'connection', code: 'ECONNRESET' }, fresh)).toBeUndefined();
		expect(retryDelay({ kind: 'connection' }, fresh)).toBeUndefined();
	});

	test('backoff: doubles from the first wait, stops at its ceiling, and jitter takes at most its share off', () => {
		expect([1, 2, 3, 6].map((attempt) => backoffMs({ firstMs: 500, maxMs: 10_000 }, attempt))).toEqual([
			500, 1000, 2000, 10_000,
		]);
		expect(backoffMs({ firstMs: 1000, jitter: 0.5 }, 3, () => 0)).toBe(4000);
		expect(backoffMs({ firstMs: 1000, jitter: 0.5 }, 3, () => 0.999999)).toBe(2000);
	});
});

describe('the message_created event', () => {
	const payload = {
		to: '4930123456',
		from: '4915112345678',
		text: 'Hello',
		attachments: [],
		status: 'received',
		channel: 'whatsapp',
		contact: {
			href: 'https://dash.example/c/1',
			conversationHref: 'https://dash.example/c/1/conv',
			name: 'Ann Lee',
			tags: ['vip'],
			uuid: '3b0c3f0e-8c1a-4f6e-9d2b-6a1f0c9e7d21',
			source: 'whatsapp',
			avatarUrl: null,
			createdAt: '2026-11-20T10:00:00Z',
			phoneNumber: '+4915112345678',
		},
		createdAt: '2026-11-21T10:00:00+00:00',
		metadata: {},
		messageLocation: { latitude: 52.5, longitude: 13.4 },
	};

	test('a delivery of SPEC section 6 is accepted and optional fields pass through untouched', () => {
		const parsed = messageCreatedEventSchema.parse({ event: 'message_created', payload });
		expect(parsed.payload.messageLocation).toEqual({ latitude: 52.5, longitude: 13.4 });
	});

	test('another event name or a missing payload is refused', () => {
		expect(messageCreatedEventSchema.safeParse({ event: 'message_updated', payload }).success).toBe(false);
		expect(messageCreatedEventSchema.safeParse({ event: 'message_created' }).success).toBe(false);
	});
});
