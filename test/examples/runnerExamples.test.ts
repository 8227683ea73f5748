/**
 * The runner examples of examples/ through n8n-core against a real `convo-runner start` (its own
 * redis-server, the sandbox in a process of its own). n8n-core runs the pack's nodes; the few
 * n8n-nodes-base nodes of these examples are not in this harness, so they are stood in for or left
 * out, each named below, and run for real in the end-to-end suite (test/e2e) inside n8n:
 *   - "Customers" (Code): replaced by the list its code returns (read from the example itself);
 *   - "Every night at 3" (Schedule Trigger): left out; the example's manual trigger starts it;
 *   - "Count by outcome" (Summarize): left out; the report it counts is checked here;
 *   - "Read, no reply" (Filter): left out; the report rows it keeps are checked here.
 * Delivery tracking asks A1 on a short schedule, so a campaign's delivery settles within a test:
 * the sandbox is started with a tenth of its default timeline, so it reads every message 1 s after
 * its send.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { serveTrigger, type ServedTrigger } from '../harness/webhook';
import { runWorkflow, type WorkflowJson } from '../harness/workflow';
import {
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	waitForEventsDelivered,
	waitForFeederTick,
	waitForTrackingTick,
} from '../runner/support';

jest.setTimeout(180_000);

const TOKEN = 'examples-test-token-0123456789abcdef';
const examplesDir = join(__dirname, '..', '..', 'examples');
// The nightly-reindex example is pointed at its feed file in examples/: the API reads only there.
const runner = useRunnerUnderTest(
	{
		RUNNER_TOKEN: TOKEN,
		RUNNER_SOURCE_DIR: examplesDir,
		RUNNER_TRACKING_SCHEDULE: '200ms,500ms,1200ms',
	},
	{ sandbox: { timeline: { sent: 200, delivered: 400, read: 1000, failed: 200 } } },
);
let base = '';

beforeAll(async () => {
	base = await startApi(runner, {
		CONVO_BASE_URL: runner.sandbox.baseUrl,
		CONVO_ACCESS_TOKEN: runner.business.accessToken,
	});
});

const load = (file: string) =>
	JSON.parse(readFileSync(join(examplesDir, file), 'utf8')) as WorkflowJson & { id: string };
const credentials = () => ({ convoRunnerApi: { runnerUrl: base, token: TOKEN } });

async function runnerGet<T = IDataObject>(path: string): Promise<T> {
	const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
	if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
	return (await response.json()) as T;
}

/**
 * The example as this harness can run it: `replace` turns a node into a start node emitting the
 * given items (same name, so connections stay); `drop` removes a node and its connections.
 */
function runnable(
	workflow: WorkflowJson,
	{ replace = {}, drop = [] }: { replace?: Record<string, IDataObject[]>; drop?: string[] },
): WorkflowJson {
	const known = new Set(workflow.nodes.map((node) => node.name));
	for (const name of [...Object.keys(replace), ...drop])
		if (!known.has(name)) throw new Error(`the example has no node "${name}"`);
	const nodes = workflow.nodes
		.filter((node) => !drop.includes(node.name))
		.map((node) =>
			replace[node.name]
				? { ...node, type: 'harness.items', typeVersion: 1, parameters: { items: JSON.stringify(replace[node.name]) } }
				: node,
		);
	const connections: WorkflowJson['connections'] = {};
	for (const [from, byType] of Object.entries(workflow.connections)) {
		if (drop.includes(from)) continue;
		connections[from] = Object.fromEntries(
			Object.entries(byType).map(([type, outputs]) => [
				type,
				(outputs ?? []).map((list) => (list ?? []).filter((c) => !drop.includes(c.node))),
			]),
		);
	}
	// A replaced node starts the run: nothing may lead into it.
	for (const byType of Object.values(connections)) {
		for (const outputs of Object.values(byType))
			for (const list of outputs ?? []) if (list) list.splice(0, list.length, ...list.filter((c) => !replace[c.node]));
	}
	return { ...workflow, nodes, connections };
}

/** The list the "Customers" Code node returns: the array literal assigned to `customers` in its code. */
function customersOf(workflow: WorkflowJson): IDataObject[] {
	const code = String(workflow.nodes.find((node) => node.name === 'Customers')?.parameters.jsCode ?? '');
	const literal = /const customers = (\[[\s\S]*?\]);/.exec(code)?.[1];
	if (!literal) throw new Error('the Customers code has no `const customers = [...]` list');
	return JSON.parse(literal) as IDataObject[];
}

describe('campaign-from-customer-list and campaign-finished-summary, together against the runner', () => {
	let served: ServedTrigger | undefined;
	// Unpublished as n8n does (the runner delivers nothing more to it), then its server closed.
	afterAll(async () => {
		await served?.deactivate();
		await served?.close();
	});

	test('the list becomes one campaign; campaign.finished starts the summary workflow once, whose report holds every row', async () => {
		const summary = load('campaign-finished-summary.json');
		served = await serveTrigger({
			workflow: runnable(summary, { drop: ['Count by outcome'] }),
			credentials: credentials(),
		});
		await served.activate();
		const { webhooks } = await runnerGet<{ webhooks: Array<{ url: string; events: string[] }> }>('/api/webhooks');
		expect(webhooks.filter((hook) => hook.url === served?.url)).toEqual([
			expect.objectContaining({ events: ['campaign.finished'] }),
		]);

		const example = load('campaign-from-customer-list.json');
		const customers = customersOf(example);
		expect(customers).toHaveLength(6);
		const result = await runWorkflow(runnable(example, { replace: { Customers: customers } }), {
			credentials: credentials(),
			startNode: 'Customers',
		});
		expect(result.errorOf('Create campaign')).toBeUndefined();
		const [created] = result.outputOf('Create campaign').map((item) => item.json);
		// One bad phone and one repeated phone come back rejected with their item index; the 4 others go.
		expect(created).toMatchObject({ total: 6, accepted: 4, rejected: 2 });
		expect((created.rejections as IDataObject[]).map((r) => r.item).sort()).toEqual([4, 5]);

		const [execution] = await served.waitForExecutions(1, 90_000);
		const runData = execution.run.data.resultData;
		expect(runData.error).toBeUndefined();
		expect(execution.items[0].json).toMatchObject({
			type: 'campaign.finished',
			data: { id: created.campaign_id, state: 'completed' },
		});
		const report = (runData.runData['Get report']?.[0]?.data?.main?.[0] ?? []).map((item) => item.json);
		expect(report).toHaveLength(6);
		const byOutcome = report.reduce<Record<string, number>>(
			(counts, row) => ({ ...counts, [String(row.outcome)]: (counts[String(row.outcome)] ?? 0) + 1 }),
			{},
		);
		expect(byOutcome).toEqual({ sent: 4, rejected: 2 });

		// What the sandbox got: one template send to each accepted customer, nothing else.
		const sends = await templateSends(runner.sandbox);
		const expected = customers.slice(0, 4).map((customer) => String(customer.phone).replace(/\D/g, ''));
		expect(sends.map((send) => send.to).sort()).toEqual(expected.sort());
		// One event, one execution: a second delivery of it would have started another, and every
		// delivery attempt the runner will make has been made (the harness counts a start before it answers).
		await waitForEventsDelivered(runner.context);
		expect(served.started()).toBe(1);
	});
});

describe('campaign-delivery-settled-followup against the runner', () => {
	let served: ServedTrigger | undefined;
	// Unpublished as n8n does (the runner delivers nothing more to it), then its server closed.
	afterAll(async () => {
		await served?.deactivate();
		await served?.close();
	});

	test('campaign.delivery_settled starts the follow-up once per campaign, with its funnel as the sandbox shows it; the report has who read and did not reply', async () => {
		const followup = load('campaign-delivery-settled-followup.json');
		served = await serveTrigger({
			workflow: runnable(followup, { drop: ['Read, no reply'] }),
			credentials: credentials(),
		});
		await served.activate();
		const { webhooks } = await runnerGet<{ webhooks: Array<{ url: string; events: string[] }> }>('/api/webhooks');
		expect(webhooks.filter((hook) => hook.url === served?.url)).toEqual([
			expect.objectContaining({ events: ['campaign.delivery_settled'] }),
		]);

		// A campaign of its own, under a Campaign Key: the same list from the same node would be answered
		// with the earlier test's campaign (the node's Idempotency-Key is the list's), whose delivery may
		// have settled before this trigger was registered.
		const example = load('campaign-from-customer-list.json');
		const ownCampaign = runnable(example, { replace: { Customers: customersOf(example) } });
		const createNode = ownCampaign.nodes.find((node) => node.name === 'Create campaign');
		if (!createNode) throw new Error('the example has no node "Create campaign"');
		createNode.parameters = { ...createNode.parameters, additionalFields: { campaignKey: 'followup-test' } };
		const result = await runWorkflow(ownCampaign, { credentials: credentials(), startNode: 'Customers' });
		expect(result.errorOf('Create campaign')).toBeUndefined();
		const [created] = result.outputOf('Create campaign').map((item) => item.json);
		const id = String(created.campaign_id);
		const trigger = served;
		const forCampaign = () =>
			trigger.executions.filter((execution) => (execution.items[0]?.json.data as IDataObject | undefined)?.id === id);
		const [execution] = await waitFor(
			"the follow-up started by the campaign's delivery_settled",
			async () => (forCampaign().length > 0 ? forCampaign() : undefined),
			120_000,
			200,
		);
		expect(execution.run.data.resultData.error).toBeUndefined();

		// The funnel is what the sandbox shows now: the 4 sent messages read (default timeline), none replied.
		const messages = (await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/messages`)).json()) as Array<{
			uuid: string;
			to: string;
			status: string;
			source: string;
		}>;
		const report = (execution.run.data.resultData.runData['Get report']?.[0]?.data?.main?.[0] ?? []).map(
			(item) => item.json,
		);
		const sentIds = new Set(report.map((row) => row.message_id).filter(Boolean));
		const mine = messages.filter((message) => sentIds.has(message.uuid));
		expect(mine.map((message) => message.status)).toEqual(['read', 'read', 'read', 'read']);
		expect(execution.items[0].json).toMatchObject({
			type: 'campaign.delivery_settled',
			data: {
				id,
				state: 'completed',
				funnel: {
					audience: 6,
					accepted: 4,
					sent: 4,
					delivered: 4,
					read: 4,
					replied: 0,
					failed_delivery: 0,
					in_flight: 0,
					tracking: 'messaging_api',
					settled: true,
				},
			},
		});
		// What the Filter keeps: read and no reply, the 4 customers sent to.
		const followUp = report.filter((row) => row.delivery === 'read' && !row.replied_at);
		expect(followUp.map((row) => String(row.phone).replace(/\D/g, '')).sort()).toEqual(
			mine.map((message) => message.to).sort(),
		);
		expect(report.filter((row) => row.outcome === 'rejected').map((row) => row.delivery)).toEqual(['', '']);

		// Once per campaign: every delivery the runner will make has been made, and after a tracking
		// tick and a feeder tick that began later (a second event would have been emitted and handed
		// on by then) no second event came for this campaign (nor for the earlier test's, which may
		// settle meanwhile).
		await waitForEventsDelivered(runner.context);
		await Promise.all([waitForTrackingTick(runner.context), waitForFeederTick(runner.context)]);
		await waitForEventsDelivered(runner.context);
		expect(forCampaign()).toHaveLength(1);
		const perCampaign = trigger.executions.reduce<Record<string, number>>((counts, e) => {
			const campaign = String((e.items[0]?.json.data as IDataObject).id);
			return { ...counts, [campaign]: (counts[campaign] ?? 0) + 1 };
		}, {});
		expect(Object.values(perCampaign).every((count) => count === 1)).toBe(true);
		expect(trigger.webhookErrors).toEqual([]);
	});
});

describe('nightly-reindex against the runner', () => {
	test('starts a run that syncs the feed into the collection, deactivating nothing that is in it', async () => {
		const feed = join(examplesDir, 'products-feed.ndjson');
		const example = load('nightly-reindex.json');
		const node = example.nodes.find((candidate) => candidate.name === 'Reindex products');
		expect(node?.parameters.source).toBe('https://shop.example.com/feeds/products.ndjson');
		// The runner reads a path on its machine as it reads a URL: the example's own feed file.
		(node as { parameters: IDataObject }).parameters.source = feed;
		const result = await runWorkflow(runnable(example, { drop: ['Every night at 3'] }), { credentials: credentials() });
		expect(result.errorOf('Reindex products')).toBeUndefined();
		const [started] = result.outputOf('Reindex products').map((item) => item.json);
		const run = await waitFor('the reindex run to end', async () => {
			const status = await runnerGet<{ state: string; counts: Record<string, number> }>(
				`/api/reindex/${String(started.id)}`,
			);
			return ['queued', 'running'].includes(status.state) ? undefined : status;
		});
		expect(run).toMatchObject({
			state: 'completed',
			counts: expect.objectContaining({ read: 5, created: 5, rejected: 0 }),
		});
		const collection = '6dcea3a6-4af1-40ad-844e-4a72ff2233cf';
		const response = await fetch(`${runner.sandbox.externalUrl}/search/items?collection_id=${collection}`, {
			headers: { 'x-api-key': runner.business.apiKey },
		});
		const { items } = (await response.json()) as { items: Array<{ external_id: string; is_active: boolean }> };
		const skus = readFileSync(feed, 'utf8')
			.trim()
			.split('\n')
			.map((line) => (JSON.parse(line) as { sku: string }).sku);
		expect(
			items
				.filter((item) => item.is_active)
				.map((item) => item.external_id)
				.sort(),
		).toEqual(expect.arrayContaining(skus.sort()));
	});
});
