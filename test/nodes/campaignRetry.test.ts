/**
 * Campaign → Create when the runner's answers are lost (#17 item 10), through n8n-core with the
 * real node against a real `convo-runner start`, its Redis and the sandbox. A proxy of the test's
 * own forwards every request to the runner and, when told, lets the runner act but drops its
 * answer (the connection is cut once the runner answered): the start happened, the node never
 * hears of it. Then a NEW execution of the same workflow input runs, as n8n's Retry of a failed
 * execution does; the sandbox's own log must hold each phone exactly once.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject } from 'n8n-workflow';

import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { campaignCreateParameters } from './support';
import { positionalTemplate, startApi, templateSends, useRunnerUnderTest, waitFor } from '../runner/support';

jest.setTimeout(240_000);

const TOKEN = 'retry-test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

/** Which answers the proxy drops after the runner acted: by method and the end of the path. */
const dropping = { start: false, get: false };
let lostAnswers = 0;
let server: Server;
let proxyUrl = '';

beforeAll(async () => {
	base = await startApi(runner);
	server = createServer((incoming, outgoing) => {
		const url = new URL(incoming.url ?? '/', base);
		const drop =
			(dropping.start && incoming.method === 'POST' && url.pathname.endsWith('/start')) ||
			(dropping.get && incoming.method === 'GET' && /^\/api\/campaigns\/[^/]+$/.test(url.pathname));
		const upstream = httpRequest(url, { method: incoming.method, headers: incoming.headers }, (answer) => {
			if (drop) {
				// The runner did the work; its answer never reaches the node.
				answer.resume();
				answer.on('end', () => {
					lostAnswers++;
					outgoing.socket?.destroy();
				});
				return;
			}
			outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
			answer.pipe(outgoing);
		});
		upstream.on('error', () => outgoing.destroy());
		incoming.pipe(upstream);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	proxyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
	server?.closeAllConnections();
	await new Promise((resolve) => server?.close(resolve));
});

async function runNode(parameters: IDataObject, items: IDataObject[]) {
	// No fixed execution id: every run is a new execution, as n8n's Retry of a failed execution is.
	const result = await runWorkflow(itemsThen(items, convoNode(parameters)), {
		credentials: { convoRunnerApi: { runnerUrl: proxyUrl, token: TOKEN } },
	});
	const error = result.errorOf('Convo') as (Error & { description?: string }) | undefined;
	return { json: result.outputOf('Convo').map((item) => item.json), error };
}

const phoneOf = (seed: number, i: number) => `49173${String(seed).padStart(2, '0')}${String(i).padStart(6, '0')}`;
const itemsOf = (seed: number, count: number) =>
	Array.from({ length: count }, (_, i) => ({
		phone: `+${phoneOf(seed, i)}`,
		name: `Customer ${i}`,
		order: `#${i}`,
	})) as IDataObject[];

const createParameters = (extra: IDataObject = {}) =>
	campaignCreateParameters(runner.business, positionalTemplate(runner.business).id, extra);

async function campaignsListed(): Promise<string[]> {
	const response = await fetch(`${base}/api/campaigns?limit=500`, { headers: { authorization: `Bearer ${TOKEN}` } });
	return ((await response.json()) as { items: Array<{ id: string }> }).items.map((item) => item.id);
}

/** Waits until every listed campaign settled, then counts the sandbox's sends per phone of `seed`. */
async function sendsPerPhone(seed: number): Promise<Map<string, number>> {
	await waitFor(
		'every campaign to settle',
		async () => {
			const response = await fetch(`${base}/api/campaigns?limit=500`, {
				headers: { authorization: `Bearer ${TOKEN}` },
			});
			const { items } = (await response.json()) as { items: Array<{ state: string }> };
			return items.every((item) => item.state !== 'running' && item.state !== 'scheduled');
		},
		120_000,
		500,
	);
	const counts = new Map<string, number>();
	for (const message of await templateSends(runner.sandbox))
		if (message.to.startsWith(`49173${String(seed).padStart(2, '0')}`))
			counts.set(message.to, (counts.get(message.to) ?? 0) + 1);
	return counts;
}

test('every answer to start and to Get lost: the execution fails naming the campaign as maybe running; a NEW execution of the same input finds it; each phone is sent once', async () => {
	const items = itemsOf(1, 6);
	dropping.start = true;
	dropping.get = true;
	const lostBefore = lostAnswers;
	const failed = await runNode(createParameters(), items);
	dropping.start = false;
	dropping.get = false;
	const listedAfterFailure = await campaignsListed();

	// n8n's Retry of the failed execution: a new execution id, the same input.
	const retried = await runNode(createParameters(), items);
	const counts = await sendsPerPhone(1);
	expect([...counts.values()]).toEqual([1, 1, 1, 1, 1, 1]);

	expect(lostAnswers - lostBefore).toBeGreaterThanOrEqual(2);
	const campaignId = listedAfterFailure[0];
	expect(failed.error?.message).toBe(`Campaign ${campaignId} may be running: the runner did not answer its start`);
	expect(failed.error?.description).toContain(`Campaign → Get`);
	expect(retried.error).toBeUndefined();
	expect(retried.json[0]).toMatchObject({ campaign_id: campaignId, total: 6, accepted: 6, rejected: 0 });
	expect(await campaignsListed()).toEqual(listedAfterFailure);
});

test('every answer to start lost but the runner can be asked: the node finds the campaign running and succeeds; a re-run of the same input sends nothing again', async () => {
	const items = itemsOf(2, 5);
	dropping.start = true;
	const lostBefore = lostAnswers;
	const first = await runNode(createParameters(), items);
	dropping.start = false;
	const again = await runNode(createParameters(), items);
	const counts = await sendsPerPhone(2);
	expect([...counts.values()]).toEqual([1, 1, 1, 1, 1]);

	expect(lostAnswers - lostBefore).toBeGreaterThanOrEqual(1);
	expect(first.error).toBeUndefined();
	expect(first.json[0]).toMatchObject({ state: expect.stringMatching(/^(running|completed)$/), total: 5, accepted: 5 });
	expect(again.json[0]).toMatchObject({ campaign_id: first.json[0].campaign_id });
});

test('a new Campaign Key sends the same input again on purpose; the same key again does not', async () => {
	const items = itemsOf(3, 3);
	const first = await runNode(createParameters({ additionalFields: { campaignKey: 'reminder-1' } }), items);
	const same = await runNode(createParameters({ additionalFields: { campaignKey: 'reminder-1' } }), items);
	const other = await runNode(createParameters({ additionalFields: { campaignKey: 'reminder-2' } }), items);
	expect(same.json[0].campaign_id).toBe(first.json[0].campaign_id);
	expect(other.json[0].campaign_id).not.toBe(first.json[0].campaign_id);
	const counts = await sendsPerPhone(3);
	expect([...counts.values()]).toEqual([2, 2, 2]);
});
