/**
 * The Campaign and Reindex Run resources through n8n-core against a real `convo-runner start`
 * (its own redis-server, the sandbox in a process of its own), with a counting proxy in front of
 * the runner: what the runner received and what the sandbox sent are counted, not the node's word.
 */
import type { IDataObject } from 'n8n-workflow';

import { convoNode, itemsThen, runWorkflow, testCredential } from '../harness/workflow';
import { campaignCreateParameters } from './support';
import {
	positionalTemplate,
	startApi,
	startCountingProxy,
	templateSends,
	useRunnerUnderTest,
	waitFor,
} from '../runner/support';
import { collectionOf, FEED_DIR, feedText, products, range, writeFeed } from '../runner/reindexSupport';

jest.setTimeout(240_000);

const TOKEN = 'node-test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_SOURCE_DIR: FEED_DIR });
let base = '';
let proxy: Awaited<ReturnType<typeof startCountingProxy>>;

beforeAll(async () => {
	base = await startApi(runner);
	proxy = await startCountingProxy(base);
});
afterAll(async () => {
	await proxy?.close();
});

const credentials = () => ({ convoRunnerApi: { runnerUrl: proxy.url, token: TOKEN } });

/** A read of the runner that does not go through the node under test. */
async function runnerGet<T = IDataObject>(path: string): Promise<T> {
	const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
	if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
	return (await response.json()) as T;
}

async function runNode(parameters: IDataObject, items: IDataObject[], executionId?: string) {
	const result = await runWorkflow(itemsThen(items, convoNode(parameters)), {
		credentials: credentials(),
		executionId,
	});
	const error = result.errorOf('Convo') as (Error & { description?: string }) | undefined;
	return {
		...result,
		json: result.outputOf('Convo').map((item) => item.json),
		output: result.outputOf('Convo'),
		error,
	};
}

const phoneOf = (seed: number, i: number) => `49172${String(seed).padStart(2, '0')}${String(i).padStart(6, '0')}`;

const createParameters = (extra: IDataObject = {}) =>
	campaignCreateParameters(runner.business, positionalTemplate(runner.business).id, extra);

const campaignRequests = () => proxy.requests.filter((url) => url.pathname.startsWith('/api/campaigns'));

describe('Campaign → Create', () => {
	const COUNT = 2000;
	const BAD = { 5: 'not a phone', 1500: 'duplicate of item 0', 1999: 'empty' } as const;
	const items = Array.from({ length: COUNT }, (_, i) => ({
		phone: `+${phoneOf(1, i)}`,
		name: `Customer ${i}`,
		order: `#${i}`,
	})) as IDataObject[];
	items[5].phone = 'call me maybe';
	items[1500].phone = items[0].phone;
	items[1999].phone = '';
	const executionId = 'campaign-execution-1';
	let campaignId = '';

	it('makes ONE campaign of 2,000 items in a few requests; bad rows come back rejected with their item index', async () => {
		const before = campaignRequests().length;
		const result = await runNode(createParameters(), items, executionId);
		expect(result.error).toBeUndefined();
		expect(result.json).toHaveLength(1);
		const [out] = result.json;
		campaignId = String(out.campaign_id);
		expect(out).toMatchObject({ state: 'running', total: COUNT, accepted: COUNT - 3, rejected: 3 });
		const rejections = out.rejections as IDataObject[];
		expect(rejections.map((r) => r.item).sort((a, b) => Number(a) - Number(b))).toEqual(Object.keys(BAD).map(Number));
		for (const rejection of rejections) {
			expect(rejection.line).toBe(Number(rejection.item) + 1);
			expect(rejection.reason).toEqual(expect.any(String));
		}
		// The output item is paired to every input item.
		expect(result.output[0].pairedItem).toHaveLength(COUNT);

		// What the runner received: a draft, two chunks of 1,000 rows, the start.
		const made = campaignRequests()
			.slice(before)
			.map((url) => url.pathname);
		expect(made).toEqual([
			'/api/campaigns',
			`/api/campaigns/${campaignId}/recipients`,
			`/api/campaigns/${campaignId}/recipients`,
			`/api/campaigns/${campaignId}/start`,
		]);
		expect(await runnerGet(`/api/campaigns/${campaignId}`)).toMatchObject({ id: campaignId, total: COUNT });
	});

	it('running the same execution again returns the same campaign, and the runner still holds 2,000 recipients', async () => {
		const { items: listedBefore } = await runnerGet<{ items: IDataObject[] }>('/api/campaigns?limit=500');
		const again = await runNode(createParameters(), items, executionId);
		expect(again.error).toBeUndefined();
		expect(again.json[0]).toMatchObject({ campaign_id: campaignId, accepted: COUNT - 3, rejected: 3 });
		expect(await runnerGet(`/api/campaigns/${campaignId}`)).toMatchObject({ total: COUNT });
		const { items: listedAfter } = await runnerGet<{ items: IDataObject[] }>('/api/campaigns?limit=500');
		expect(listedAfter.map((c) => c.id)).toEqual(listedBefore.map((c) => c.id));
	});

	it("a new execution of the same input is the same campaign (as n8n's Retry is); other content or a new Campaign Key is a new campaign", async () => {
		const few = [{ phone: `+${phoneOf(2, 0)}`, name: 'A', order: '#1' }];
		const first = await runNode(createParameters({ rate: 5 }), few);
		const second = await runNode(createParameters({ rate: 5 }), few);
		expect(second.json[0].campaign_id).toEqual(first.json[0].campaign_id);
		const otherContent = await runNode(createParameters({ rate: 5 }), [{ ...few[0], name: 'B' }]);
		const otherKey = await runNode(createParameters({ rate: 5, additionalFields: { campaignKey: 'again' } }), few);
		expect(new Set([first, otherContent, otherKey].map((run) => run.json[0].campaign_id)).size).toBe(3);
		for (const run of [first, otherContent, otherKey]) {
			await fetch(`${base}/api/campaigns/${String(run.json[0].campaign_id)}/cancel`, {
				method: 'POST',
				headers: { authorization: `Bearer ${TOKEN}` },
			});
		}
	});

	it('after the campaign ran, the sandbox holds exactly one message per accepted phone', async () => {
		const done = await waitFor(
			'the campaign to complete',
			async () => {
				const status = await runnerGet(`/api/campaigns/${campaignId}`);
				return status.state === 'completed' ? status : undefined;
			},
			180_000,
			500,
		);
		expect(done).toMatchObject({ counts: { sent: COUNT - 3, rejected: 3 } });
		const accepted = new Set(items.filter((_, i) => !(i in BAD)).map((item) => String(item.phone).slice(1)));
		const sends = (await templateSends(runner.sandbox)).filter((message) => message.to.startsWith('49172' + '01'));
		expect(sends).toHaveLength(accepted.size);
		expect(new Set(sends.map((message) => message.to))).toEqual(accepted);
		const oneOf = sends.find((message) => message.to === phoneOf(1, 7));
		expect(oneOf?.template?.variables).toMatchObject({ 1: 'Customer 7', 2: '#7' });
	});

	it('Get Report pages through all recipients (Return All), cuts at Limit, and filters by outcome', async () => {
		const before = proxy.requests.length;
		const all = await runNode({ resource: 'campaign', operation: 'getReport', campaignId, returnAll: true }, [{}]);
		expect(all.error).toBeUndefined();
		expect(all.json).toHaveLength(COUNT);
		expect(all.json.map((row) => row.line)).toEqual(Array.from({ length: COUNT }, (_, i) => i + 1));
		const reportCalls = proxy.requests.slice(before).filter((url) => url.pathname.endsWith('/report'));
		expect(reportCalls.length).toBeGreaterThanOrEqual(2);
		expect(reportCalls.every((url) => url.searchParams.has('limit') && url.searchParams.has('offset'))).toBe(true);

		const limited = await runNode(
			{ resource: 'campaign', operation: 'getReport', campaignId, returnAll: false, limit: 50 },
			[{}],
		);
		expect(limited.json).toHaveLength(50);
		expect(limited.json[49]).toMatchObject({
			line: 50,
			phone: phoneOf(1, 49),
			outcome: 'sent',
			message_id: expect.any(String),
		});

		const rejected = await runNode(
			{ resource: 'campaign', operation: 'getReport', campaignId, returnAll: true, outcome: 'rejected' },
			[{}],
		);
		expect(rejected.json.map((row) => row.line)).toEqual([6, 1501, 2000]);
	});

	it('Get answers state, counts, rate and ETA', async () => {
		const got = await runNode({ resource: 'campaign', operation: 'get', campaignId }, [{}]);
		expect(got.json[0]).toMatchObject({ id: campaignId, state: 'completed', counts: { sent: COUNT - 3 } });
		expect(got.json[0]).toHaveProperty('rate');
		expect(got.json[0]).toHaveProperty('eta_seconds');
	});
});

describe('Campaign → Pause, Resume, Cancel', () => {
	it('change the state the runner holds', async () => {
		const items = Array.from({ length: 40 }, (_, i) => ({ phone: `+${phoneOf(3, i)}`, name: `N${i}`, order: `#${i}` }));
		const created = await runNode(createParameters({ rate: 1 }), items);
		const campaignId = String(created.json[0].campaign_id);
		const control = async (operation: string) => {
			const result = await runNode({ resource: 'campaign', operation, campaignId }, [{}]);
			expect(result.error).toBeUndefined();
			return (await runnerGet(`/api/campaigns/${campaignId}`)).state;
		};
		expect(await control('pause')).toBe('paused');
		expect(await control('resume')).toBe('running');
		expect(await control('cancel')).toBe('cancelled');
		const report = await runnerGet<IDataObject[]>(`/api/campaigns/${campaignId}/report?format=json`);
		expect(report.filter((row) => row.outcome === 'cancelled').length).toBeGreaterThan(20);
	});
});

describe('runner errors', () => {
	it('an unknown campaign: 404 with what to do; a malformed ID fails before sending, naming the field', async () => {
		const unknown = await runNode({ resource: 'campaign', operation: 'get', campaignId: 'no-such-campaign' }, [{}]);
		expect(unknown.error?.message).toMatch(/Not found at the runner/);
		expect(unknown.error?.description).toMatch(/Check the ID/);
		const before = proxy.requests.length;
		const malformed = await runNode({ resource: 'campaign', operation: 'get', campaignId: 'a/b?c' }, [{}]);
		expect(malformed.error?.message).toMatch(/^Campaign ID "a\/b\?c" is not a runner ID/);
		expect(proxy.requests.length).toBe(before);
	});

	it('a wrong token: the node says to check the credential, and never shows the token', async () => {
		const result = await runWorkflow(
			itemsThen([{}], convoNode({ resource: 'campaign', operation: 'get', campaignId: 'x1' })),
			{
				credentials: { convoRunnerApi: { runnerUrl: base, token: 'wrong-token-0123456789' } },
			},
		);
		const error = result.errorOf('Convo') as Error & { description?: string };
		expect(error.message).toBe('The runner refused the token');
		expect(error.description).toMatch(/Token in the Convo Runner API credential/);
		expect(JSON.stringify(error)).not.toContain(TOKEN);
	});
});

describe('Convo Runner API credential', () => {
	it('passes with the right token, fails with a wrong one and against another server', async () => {
		expect(await testCredential('convoRunnerApi', { runnerUrl: `${base}/`, token: TOKEN })).toMatchObject({
			status: 'OK',
		});
		expect(await testCredential('convoRunnerApi', { runnerUrl: `${base}/api`, token: TOKEN })).toMatchObject({
			status: 'OK',
		});
		expect(await testCredential('convoRunnerApi', { runnerUrl: base, token: 'wrong-token-0123456789' })).toMatchObject({
			status: 'Error',
			statusCode: 401,
			message: expect.stringContaining('token was refused'),
		});
		expect(await testCredential('convoRunnerApi', { runnerUrl: runner.sandbox.baseUrl, token: TOKEN })).toMatchObject({
			status: 'Error',
		});
	});
});

describe('Reindex Run → Start, Get', () => {
	it('starts a run of a collection from a feed and reads its status', async () => {
		const source = writeFeed(feedText(products(range(0, 20)), 'ndjson'), 'node-feed.ndjson');
		const started = await runNode(
			{
				resource: 'reindexRun',
				operation: 'start',
				collectionId: { __rl: true, mode: 'id', value: collectionOf(runner) },
				source,
				format: 'ndjson',
				idField: 'sku',
				additionalFields: { rate: 50, embeddingJson: '{"text": "title"}' },
			},
			[{}],
		);
		expect(started.error).toBeUndefined();
		const runId = String(started.json[0].id);
		expect(runId).not.toBe('');
		const done = await waitFor('the run to complete', async () => {
			const got = await runNode({ resource: 'reindexRun', operation: 'get', runId }, [{}]);
			return got.json[0]?.state === 'completed' ? got.json[0] : undefined;
		});
		expect(done).toMatchObject({ id: runId, counts: { read: 20, failed: 0 } });
	});

	it('a field the runner refuses is named as the user sees it', async () => {
		const refused = await runNode(
			{
				resource: 'reindexRun',
				operation: 'start',
				collectionId: { __rl: true, mode: 'id', value: collectionOf(runner) },
				source: '/nowhere.ndjson',
				idField: '={{ "" }}',
			},
			[{}],
		);
		expect(refused.error?.message).toMatch(/ID Field/);
	});

	it("a missing feed is named by the node's own parameter, Source, not by the CLI's flag", async () => {
		const missing = await runNode(
			{
				resource: 'reindexRun',
				operation: 'start',
				collectionId: { __rl: true, mode: 'id', value: collectionOf(runner) },
				source: 'missing-feed.ndjson',
				format: 'ndjson',
				idField: 'sku',
			},
			[{}],
		);
		expect(missing.error?.message).toBe(
			"The runner refused a field: Source missing-feed.ndjson: no such file in the runner's source directory",
		);
		expect(missing.error?.description).toBe('Correct Source (runner API field: source).');
	});
});
