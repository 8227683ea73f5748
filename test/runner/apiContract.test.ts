/**
 * The runner's control API against the contract the node pack is built on (convo-contract's
 * RUNNER_ROUTES, RUNNER_ANSWERS and bounds), over real HTTP against a running `convo-runner start`
 * (real Redis, the sandbox): every route of the contract is served with its method, the runner
 * checks ids and rates by the contract's pattern and bounds, and real answers of every route the
 * node reads parse with the contract's answer schemas.
 */
import {
	addRecipientsBody,
	addSuppressionBody,
	createCampaignBody,
	RATE_BOUNDS,
	RECIPIENTS_PER_CHUNK,
	RUNNER_ANSWERS,
	RUNNER_ROUTES,
	runnerPath,
	startReindexBody,
	type RunnerRouteName,
} from 'convo-contract';

import { collectionOf, FEED_DIR, feedText, products, range, writeFeed } from './reindexSupport';
import { positionalTemplate, startApi, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(120_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_SOURCE_DIR: FEED_DIR });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

async function raw(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	return { status: response.status, json: text === '' ? undefined : JSON.parse(text) };
}

/** Routes whose real answer was parsed with the contract's schema in this file. */
const parsed = new Set<RunnerRouteName>();

/** Calls a contract route as the node does and parses the answer with the contract's answer schema. */
async function call(
	name: RunnerRouteName,
	options: { id?: string; body?: unknown; query?: string } = {},
): Promise<unknown> {
	const route = RUNNER_ROUTES[name];
	const answer = await raw(route.method, `${runnerPath(route, options.id)}${options.query ?? ''}`, options.body);
	expect({ name, status: answer.status, body: answer.status < 300 ? 'ok' : answer.json }).toEqual({
		name,
		status: expect.any(Number),
		body: 'ok',
	});
	const schema = (
		RUNNER_ANSWERS as Partial<
			Record<RunnerRouteName, { safeParse(value: unknown): { success: boolean; error?: unknown } }>
		>
	)[name];
	if (schema) {
		const result = schema.safeParse(answer.json);
		expect({ name, issues: result.success ? [] : result.error }).toEqual({ name, issues: [] });
		parsed.add(name);
	}
	return answer.json;
}

test('every route of the contract is served with its method', async () => {
	const openApi = (await raw('GET', '/openapi.json')).json as { paths: Record<string, Record<string, unknown>> };
	const served = new Set(
		Object.entries(openApi.paths).flatMap(([path, methods]) =>
			Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
		),
	);
	const declared = Object.entries(RUNNER_ROUTES).map(([name, route]) => ({
		name,
		route: `${route.method} ${route.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`,
	}));
	expect(declared.filter(({ route }) => !served.has(route))).toEqual([]);
	// And each answers as that route (not 404 from the router): an id the contract refuses is a 400 naming it.
	for (const [name, route] of Object.entries(RUNNER_ROUTES)) {
		if (!route.path.includes(':id')) continue;
		const answer = await raw(
			route.method,
			runnerPath(route, 'not an id!'),
			route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
		);
		expect({ name, status: answer.status, field: (answer.json as { field?: string }).field }).toEqual({
			name,
			status: 400,
			field: 'id',
		});
	}
});

test('the runner checks ids, rates and chunk sizes by the contract', async () => {
	const business = runner.business;
	const draft = (await call('createCampaign', {
		body: { template_id: positionalTemplate(business).id, from: business.phoneNumbers[0], draft: true, recipients: [] },
	})) as { id: string };

	// The longest id the pattern allows is looked up (404: no such campaign); one character more is refused (400).
	expect((await raw('GET', runnerPath(RUNNER_ROUTES.getCampaign, 'a'.repeat(64)))).status).toBe(404);
	expect((await raw('GET', runnerPath(RUNNER_ROUTES.getCampaign, 'a'.repeat(65)))).status).toBe(400);

	const rate = RUNNER_ROUTES.setCampaignRate;
	expect((await raw(rate.method, runnerPath(rate, draft.id), { rate: RATE_BOUNDS.max })).status).toBe(200);
	expect((await raw(rate.method, runnerPath(rate, draft.id), { rate: RATE_BOUNDS.max + 1 })).status).toBe(400);
	expect((await raw(rate.method, runnerPath(rate, draft.id), { rate: RATE_BOUNDS.min - 1 })).status).toBe(400);
	const tooFast = await raw(RUNNER_ROUTES.createCampaign.method, RUNNER_ROUTES.createCampaign.path, {
		template_id: 't',
		from: '4930',
		rate: RATE_BOUNDS.max + 1,
		draft: true,
	});
	expect(tooFast).toMatchObject({ status: 400, json: { field: 'rate' } });

	const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ phone: `49170${String(i).padStart(7, '0')}` }));
	const chunk = RUNNER_ROUTES.addRecipients;
	expect(
		await raw(chunk.method, runnerPath(chunk, draft.id), { recipients: rows(RECIPIENTS_PER_CHUNK + 1) }),
	).toMatchObject({ status: 400, json: { field: 'recipients' } });
	expect(
		(await raw(chunk.method, runnerPath(chunk, draft.id), { recipients: rows(RECIPIENTS_PER_CHUNK) })).status,
	).toBe(200);
	await call('cancelCampaign', { id: draft.id });
});

test('real answers of every route the node pack reads parse with the contract', async () => {
	const business = runner.business;
	const template = positionalTemplate(business);
	// What the Campaign → Create operation sends, checked by the contract's own request schemas first.
	const draftBody = createCampaignBody.parse({
		template_id: template.id,
		from: business.phoneNumbers[0],
		rate: 1,
		draft: true,
		recipients: [],
	});
	const draft = (await call('createCampaign', { body: draftBody })) as { id: string };
	const variables = Object.fromEntries(template.variables.map((name: string, i: number) => [name, `v${i}`]));
	const chunk = addRecipientsBody.parse({
		recipients: [
			...range(0, 5).map((i) => ({ phone: `4917100000${i}`, ...variables })),
			{ phone: 'not a phone', ...variables },
		],
		first_line: 1,
	});
	const added = (await call('addRecipients', { id: draft.id, body: chunk })) as { added: { rejections: unknown[] } };
	expect(added.added.rejections).toHaveLength(1);
	await call('startCampaign', { id: draft.id, body: {} });
	await call('pauseCampaign', { id: draft.id, body: {} });
	await call('resumeCampaign', { id: draft.id, body: {} });
	await call('setCampaignRate', { id: draft.id, body: { rate: 2 } });
	await call('getCampaign', { id: draft.id });
	const report = (await call('campaignReport', { id: draft.id, query: '?format=json&offset=0&limit=10' })) as unknown[];
	expect(report.length).toBe(6);
	await call('cancelCampaign', { id: draft.id, body: {} });
	await call('listCampaigns', { query: '?limit=1' });
	// A send in flight at the cancel keeps the campaign finishing until it settles (409 meanwhile).
	const finishing = runner.context.keys.finishing(business.phoneNumbers[0]);
	await waitFor(
		'the cancelled campaign to be done finishing',
		async () => (await runner.context.redis.sismember(finishing, draft.id)) === 0,
	);
	await call('deleteCampaign', { id: draft.id });

	const run = (await call('startReindex', {
		body: startReindexBody.parse({
			collection_id: collectionOf(runner),
			source: writeFeed(feedText(products(range(0, 3)), 'ndjson'), 'contract.ndjson'),
			id_field: 'sku',
		}),
	})) as { id: string };
	await call('getReindexRun', { id: run.id });

	const hook = (await call('createWebhook', {
		body: { url: 'http://127.0.0.1:9/contract-hook', events: ['campaign.finished'] },
	})) as { id: string };
	await call('getWebhook', { id: hook.id });
	await call('recordReceipt', { id: hook.id, body: { event_id: 'ev-contract-1' } });
	await call('removeWebhook', { id: hook.id });

	await call('addSuppression', {
		body: addSuppressionBody.parse({ phone: '+4917100000099', reason: 'contract', source: 'workflow' }),
	});
	await call('checkSuppression', { id: '4917100000099' });
	await call('listSuppressions', { query: '?limit=1' });
	await call('removeSuppression', { id: '4917100000099' });

	await call('setBudget', { body: { limit: 2 } });
	await call('countBudgetCustomer', { body: { phone: '+4917100000098' } });
	await call('getBudget');
	await call('clearBudget');

	expect([...Object.keys(RUNNER_ANSWERS)].filter((name) => !parsed.has(name as RunnerRouteName))).toEqual([]);
});
