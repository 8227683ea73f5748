import { OPERATION_KEYS, OPERATIONS } from 'convo-contract';
import { validInputs } from './inputs';
import { call, useSandbox, type Auth } from './support';

describe('sandbox: authentication (SPEC 5) on every endpoint', () => {
	const context = useSandbox();

	const wrongCredentials = (): Array<[string, Auth]> => {
		const { business, other } = context;
		return [
			['no credential', 'none'],
			['a wrong bearer token', { bearer: 'sbx_at_wrong' }],
			['a wrong API key', { apiKey: 'live_sbx_wrong' }],
			['an empty bearer token', { bearer: '' }],
			// The other API's kind of credential, valid there, is refused here.
			['the API key in X-API-Key', { apiKey: business.apiKey }],
			['the access token as bearer', { bearer: business.accessToken }],
			['the API key as a bearer token', { bearer: business.apiKey }],
			['the access token in X-API-Key', { apiKey: business.accessToken }],
			['the other business credential of the other kind', { bearer: other.apiKey, apiKey: other.accessToken }],
		];
	};

	it.each(OPERATION_KEYS)('%s answers 401 (and nothing else) for every missing or wrong credential', async (key) => {
		const input = validInputs(context)[key];
		const api = OPERATIONS[key].api;
		for (const [label, auth] of wrongCredentials()) {
			const right = api === 'messaging' ? label === 'the access token as bearer' : label === 'the API key in X-API-Key';
			if (right) continue;
			const answer = await call(context, key, { ...input, auth });
			if (answer.status !== 401) throw new Error(`${key} with ${label} answered ${answer.status}`);
			expect(answer.body.code).toBe('unauthorized');
			// Secrets never come back in an answer.
			expect(JSON.stringify(answer.body)).not.toContain(context.business.apiKey);
			expect(JSON.stringify(answer.body)).not.toContain(context.business.accessToken);
		}
		// Even a request that is also invalid gets 401 first.
		const invalid = await call(context, key, {
			params: { uuid: 'x', agent_id: 'x' },
			query: { limit: 'many' },
			body: OPERATIONS[key].method === 'GET' ? undefined : { nonsense: true },
			auth: 'none',
		});
		expect(invalid.status).toBe(401);
		// And the right credential passes authentication.
		const good = await call(context, key, input);
		expect(good.status).not.toBe(401);
	});

	it('says which secret each API takes when it gets the other kind', async () => {
		const { business } = context;
		const send = validInputs(context).sendMessage;
		const lookup = validInputs(context).getConversation;
		const expectRefusal = async (answer: Promise<{ status: number; body: { message: string } }>, message: string) => {
			const { status, body } = await answer;
			expect(status).toBe(401);
			expect(body.message).toBe(message);
			expect(body.message).not.toContain(business.apiKey);
			expect(body.message).not.toContain(business.accessToken);
		};
		await expectRefusal(
			call(context, 'sendMessage', { ...send, auth: { bearer: business.apiKey } }),
			'Invalid access token: this looks like an API key of the external API; the messaging API takes the access token',
		);
		await expectRefusal(
			call(context, 'sendMessage', { ...send, auth: { apiKey: business.apiKey } }),
			'Missing access token: the messaging API takes Authorization: Bearer <access token>; X-API-Key is for the external API',
		);
		await expectRefusal(
			call(context, 'getConversation', { ...lookup, auth: { apiKey: business.accessToken } }),
			'Invalid API key: this looks like an access token of the messaging API; the external API takes the API key',
		);
		await expectRefusal(
			call(context, 'getConversation', { ...lookup, auth: { bearer: business.apiKey } }),
			'Missing API key: the external API takes the API key in the X-API-Key header, not as a bearer token',
		);
		await expectRefusal(
			call(context, 'sendMessage', { ...send, auth: { bearer: 'sbx_at_wrong' } }),
			'Invalid access token: send Authorization: Bearer <access token>',
		);
		await expectRefusal(call(context, 'getConversation', { ...lookup, auth: { apiKey: 'nope' } }), 'Invalid API key');
	});
});
