import { OPERATION_KEYS, OPERATIONS } from '../../nodes/shared';
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
});
