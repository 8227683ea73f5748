// @serial: measures how long the node waits for a campaign at a send rate (Max Wait, bounded in wall time)
/**
 * The Campaign and Reindex Run resources as an n8n user meets them (#21 items 14-16), through
 * n8n-core against a real `convo-runner start` (its own redis-server, the sandbox in a process of
 * its own): ids picked From List (the node's listSearch methods, called as the editor calls them),
 * ids taken from the previous node by default, old workflows with a plain string id, Batching only
 * where it means something, one label for the business number, campaign-level errors without an
 * item index, and Create waiting for the campaign and answering one item per recipient.
 */
import type {
	IDataObject,
	INode,
	INodeListSearchResult,
	INodeParameters,
	INodeProperties,
	INodePropertyMode,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeHelpers } from 'n8n-workflow';
import { LoadOptionsContext } from 'n8n-core';

import { Convo } from '../../packages/n8n-nodes-convo/nodes/Convo/Convo.node';
import {
	convoNode,
	createAdditionalData,
	createWorkflow,
	itemsNode,
	itemsThen,
	runWorkflow,
	type WorkflowJson,
} from '../harness/workflow';
import { positionalTemplate, startApi, templateSends, useRunnerUnderTest, waitFor } from '../runner/support';
import { collectionOf, FEED_DIR, feedText, products, range, writeFeed } from '../runner/reindexSupport';
import { campaignCreateParameters, fieldLabel } from './support';

jest.setTimeout(240_000);

const TOKEN = 'everyday-test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_SOURCE_DIR: FEED_DIR });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

const description = new Convo().getNodeType(1).description;
const credentials = () => ({ convoRunnerApi: { runnerUrl: base, token: TOKEN } });

async function runner_<T = IDataObject>(method: string, path: string, body?: unknown): Promise<T> {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
	return (await response.json()) as T;
}

async function run(json: WorkflowJson, nodeName = 'Convo') {
	const result = await runWorkflow(json, { credentials: credentials() });
	const error = result.errorOf(nodeName) as (Error & { description?: string; context?: IDataObject }) | undefined;
	return {
		...result,
		json: result.outputOf(nodeName).map((item) => item.json),
		output: result.outputOf(nodeName),
		error,
	};
}

const runNode = (parameters: IDataObject, items: IDataObject[], extra: Partial<WorkflowJson['nodes'][number]> = {}) =>
	run(itemsThen(items, { ...convoNode(parameters), ...extra }));

const phoneOf = (seed: number, i: number) => `49174${String(seed).padStart(2, '0')}${String(i).padStart(6, '0')}`;
const itemsOf = (seed: number, count: number) =>
	Array.from({ length: count }, (_, i) => ({
		phone: `+${phoneOf(seed, i)}`,
		name: `Customer ${i}`,
		order: `#${i}`,
		customer_id: `cust-${seed}-${i}`,
	})) as IDataObject[];

const createParameters = (extra: IDataObject = {}) =>
	campaignCreateParameters(runner.business, positionalTemplate(runner.business).id, extra);

/** A listSearch method of the node, called as n8n's editor calls it (LoadOptionsContext, the node's credential). */
async function listSearch(method: string, filter?: string, paginationToken?: string): Promise<INodeListSearchResult> {
	const node = {
		...convoNode({ resource: 'campaign', operation: 'get' }),
		id: 'convo',
		typeVersion: 1,
		position: [0, 0],
	} as INode;
	const workflow = createWorkflow({ nodes: [node], connections: {} });
	const context = new LoadOptionsContext(workflow, node, createAdditionalData(credentials()), 'parameters.campaignId');
	const search = (
		new Convo().getNodeType(1) as {
			methods?: {
				listSearch?: Record<
					string,
					(this: LoadOptionsContext, filter?: string, token?: string) => Promise<INodeListSearchResult>
				>;
			};
		}
	).methods?.listSearch?.[method];
	if (!search) throw new Error(`no listSearch method ${method}`);
	return await search.call(context, filter, paginationToken);
}

/** The field as version 1 shows it (1.1 differs only in the default: test/nodes/editor.test.ts). */
const fieldOf = (name: string, resource: string, operation: string) =>
	description.properties.find(
		(p) =>
			p.name === name &&
			p.displayOptions?.show?.resource?.includes(resource) &&
			p.displayOptions?.show?.operation?.includes(operation) &&
			p.displayOptions?.show?.['@version']?.includes(1),
	) as INodeProperties;

describe('#21 item 14: Campaign ID and Run ID are resource locators', () => {
	it("offer From List (a listSearch method the node has) and By ID (checked against real runner ids), defaulting to the previous node's id", () => {
		const methods =
			(new Convo().getNodeType(1) as { methods?: { listSearch?: Record<string, unknown> } }).methods?.listSearch ?? {};
		for (const [name, resource, operations, fromPrevious] of [
			['campaignId', 'campaign', ['get', 'getReport', 'pause', 'resume', 'cancel', 'delete'], 'campaign_id'],
			['runId', 'reindexRun', ['get'], 'id'],
		] as const) {
			for (const operation of operations) {
				const field = fieldOf(name, resource, operation);
				expect([name, operation, field.type]).toEqual([name, operation, 'resourceLocator']);
				expect(field.default).toEqual({ mode: 'id', value: `={{ $json.${fromPrevious} }}` });
				const list = field.modes?.find((m) => m.name === 'list') as INodePropertyMode;
				expect(list.type).toBe('list');
				expect(typeof methods[String(list.typeOptions?.searchListMethod)]).toBe('function');
				const byId = field.modes?.find((m) => m.name === 'id') as INodePropertyMode;
				const regex = new RegExp(
					(byId.validation?.[0] as unknown as { properties: { regex: string } }).properties.regex,
				);
				expect(regex.test('cmwt6cul0dwet7n')).toBe(true);
				expect(regex.test('a/b?c')).toBe(false);
				expect(regex.test('')).toBe(false);
			}
		}
	});

	let campaignId = '';

	it('Create → Get in one workflow: Get reads campaign_id of its input by default; a plain string (older workflows) and a From List locator work too', async () => {
		const json: WorkflowJson = {
			nodes: [
				itemsNode('Items', itemsOf(1, 2)),
				convoNode(createParameters({ rate: 1 }), 'Create'),
				convoNode({ resource: 'campaign', operation: 'get' }, 'Get'),
			],
			connections: {
				Items: { main: [[{ node: 'Create', type: NodeConnectionTypes.Main, index: 0 }]] },
				Create: { main: [[{ node: 'Get', type: NodeConnectionTypes.Main, index: 0 }]] },
			},
		};
		const chained = await run(json, 'Get');
		expect(chained.error).toBeUndefined();
		campaignId = String(chained.outputOf('Create')[0].json.campaign_id);
		expect(chained.json[0]).toMatchObject({ id: campaignId, total: 2 });

		const plain = await runNode({ resource: 'campaign', operation: 'get', campaignId }, [{}]);
		expect(plain.error).toBeUndefined();
		expect(plain.json[0]).toMatchObject({ id: campaignId });
		const fromList = await runNode(
			{
				resource: 'campaign',
				operation: 'pause',
				campaignId: { __rl: true, mode: 'list', value: campaignId, cachedResultName: campaignId },
			},
			[{}],
		);
		expect(fromList.error).toBeUndefined();
		expect((await runner_('GET', `/api/campaigns/${campaignId}`)).state).toBe('paused');
	});

	it('an empty default says where the id comes from; a bad id typed By ID is refused before the run, as the editor shows it', async () => {
		const empty = await runNode({ resource: 'campaign', operation: 'get' }, [{ something: 'else' }]);
		expect(empty.error?.message).toBe('Campaign ID is empty');
		expect(empty.error?.description).toMatch(/From List/);
		await expect(
			runNode({ resource: 'campaign', operation: 'get', campaignId: { __rl: true, mode: 'id', value: 'a/b?c' } }, [{}]),
		).rejects.toThrow(/Campaign ID is 1 to 64 letters/);
		// An expression is checked when it is read, per item.
		const bad = await runNode(
			{ resource: 'campaign', operation: 'get', campaignId: { __rl: true, mode: 'id', value: '={{ $json.id }}' } },
			[{ id: 'a/b?c' }],
		);
		expect(bad.error?.message).toMatch(/^Campaign ID "a\/b\?c" is not a runner ID/);
	});

	it("From List shows the runner's campaigns with state and counts, pages through them, and filters by what it shows", async () => {
		// More campaigns than one page of the dropdown: drafts cost one request each.
		const drafts: string[] = [];
		for (let i = 0; i < 55; i++) {
			const draft = await runner_<IDataObject>('POST', '/api/campaigns', {
				template_id: positionalTemplate(runner.business).id,
				from: runner.business.phoneNumbers[0],
				draft: true,
				recipients: [],
			});
			drafts.push(String(draft.id));
		}
		const first = await listSearch('searchCampaigns');
		expect(first.results).toHaveLength(50);
		expect(first.paginationToken).toBe('50');
		// Newest first: the last draft heads the list, shown with its name (rows sent in the request: "Upload" and the time) and id.
		expect(first.results[0]).toEqual({
			name: expect.stringMatching(new RegExp(`^Upload \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(${drafts[54]}\\)$`)),
			value: drafts[54],
		});
		const second = await listSearch('searchCampaigns', undefined, first.paginationToken);
		expect(second.paginationToken).toBeUndefined();
		const all = [...first.results, ...second.results].map((r) => r.value);
		expect(new Set(all).size).toBe(all.length);
		expect(all).toEqual(expect.arrayContaining([...drafts, campaignId]));
		expect(all).toHaveLength(drafts.length + 1);

		const paused = await listSearch('searchCampaigns', 'PAUSED');
		expect(paused.results.map((r) => r.value)).toEqual([campaignId]);
		// Created by the node with Campaign Name empty: named after the workflow (the harness's is "harness").
		expect(paused.results[0].name).toBe(`harness (${campaignId})`);
		const one = await listSearch('searchCampaigns', drafts[3]);
		expect(one.results.map((r) => r.value)).toEqual([drafts[3]]);
		await runner_('POST', `/api/campaigns/${campaignId}/cancel`);
	});

	it('Reindex Run: Start → Get reads the run id by default; From List shows runs with state and collection', async () => {
		const source = writeFeed(feedText(products(range(0, 5)), 'ndjson'), 'everyday-feed.ndjson');
		const json: WorkflowJson = {
			nodes: [
				itemsNode('Items', [{}]),
				convoNode(
					{
						resource: 'reindexRun',
						operation: 'start',
						collectionId: { __rl: true, mode: 'id', value: collectionOf(runner) },
						source,
						format: 'ndjson',
						idField: 'sku',
					},
					'Start',
				),
				convoNode({ resource: 'reindexRun', operation: 'get' }, 'Get'),
			],
			connections: {
				Items: { main: [[{ node: 'Start', type: NodeConnectionTypes.Main, index: 0 }]] },
				Start: { main: [[{ node: 'Get', type: NodeConnectionTypes.Main, index: 0 }]] },
			},
		};
		const chained = await run(json, 'Get');
		expect(chained.error).toBeUndefined();
		const runId = String(chained.outputOf('Start')[0].json.id);
		expect(chained.json[0]).toMatchObject({ id: runId });
		await waitFor(
			'the run to complete',
			async () => (await runner_('GET', `/api/reindex/${runId}`)).state === 'completed',
		);

		const listed = await listSearch('searchReindexRuns');
		expect(listed.results).toContainEqual({
			name: `${`Collection ${collectionOf(runner)}`.slice(0, 39)}… (${runId})`,
			value: runId,
		});
		expect((await listSearch('searchReindexRuns', 'no-such-thing')).results).toEqual([]);
		const plain = await runNode({ resource: 'reindexRun', operation: 'get', runId }, [{}]);
		expect(plain.json[0]).toMatchObject({ id: runId, state: 'completed' });
	});
});

describe('#21 item 15: fields and errors that say what they mean', () => {
	/** The parameters n8n's editor shows for one operation (defaults of every field shown). */
	const shown = (resource: string, operation: string) =>
		Object.keys(
			NodeHelpers.getNodeParameters(
				description.properties,
				{ resource, operation } as INodeParameters,
				true,
				false,
				null,
				null,
			) ?? {},
		);

	it('Batching → Requests at Once is offered only where it changes something', () => {
		for (const operation of ['create', 'getReport'])
			expect([operation, shown('campaign', operation)]).not.toContainEqual([
				operation,
				expect.arrayContaining(['batching']),
			]);
		for (const [resource, operation] of [
			['campaign', 'get'],
			['campaign', 'pause'],
			['campaign', 'resume'],
			['campaign', 'cancel'],
			['reindexRun', 'start'],
			['reindexRun', 'get'],
			['template', 'send'],
			['message', 'send'],
			['agent', 'create'],
		]) {
			expect([resource, operation, shown(resource, operation)]).toEqual([
				resource,
				operation,
				expect.arrayContaining(['batching']),
			]);
		}
	});

	it("the business's sending number has one label in Template → Send and Campaign → Create", () => {
		expect(fieldLabel('template', 'send', 'fromPhoneNumber')).toBe('Business Number');
		expect(fieldLabel('campaign', 'create', 'fromPhoneNumber')).toBe('Business Number');
	});

	it('a campaign-level error carries no item index ("[item 0]" in n8n); with Continue it is one error item paired to every input', async () => {
		const items = itemsOf(2, 3);
		const bad = await runNode(createParameters({ fromPhoneNumber: 'our shop' }), items);
		expect(bad.error?.message).toMatch(/^Business Number /);
		expect(bad.error?.context?.itemIndex).toBeUndefined();

		const refused = await runWorkflow(itemsThen(items, convoNode(createParameters())), {
			credentials: { convoRunnerApi: { runnerUrl: base, token: 'wrong-token-0123456789' } },
		});
		const refusedError = refused.errorOf('Convo') as Error & { context?: IDataObject };
		expect(refusedError.message).toBe('The runner refused the token');
		expect(refusedError.context?.itemIndex).toBeUndefined();

		const continued = await runNode(createParameters({ fromPhoneNumber: 'our shop' }), items, {
			onError: 'continueRegularOutput',
		});
		expect(continued.error).toBeUndefined();
		expect(continued.output).toHaveLength(1);
		expect(continued.json[0].error).toMatch(/^Business Number /);
		expect(continued.output[0].pairedItem).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
	});

	it("an item's own fault still names its item", async () => {
		const {
			items: [newest],
		} = await runner_<{ items: IDataObject[] }>('GET', '/api/campaigns?limit=1');
		const result = await runNode({ resource: 'campaign', operation: 'get', campaignId: '={{ $json.id }}' }, [
			{ id: newest.id },
			{ id: 'a/b' },
		]);
		expect(result.error?.message).toMatch(/is not a runner ID/);
		expect(result.error?.context?.itemIndex).toBe(1);
	});
});

describe('#21 item 16: Create waits for the campaign and answers each input item with its outcome', () => {
	it("Wait for Completion: the answer is the final state with counts, and progress reaches the editor's console", async () => {
		const items = itemsOf(10, 4);
		items[2].phone = 'not a phone';
		const messages: unknown[] = [];
		const result = await runWorkflow(
			itemsThen(
				items,
				convoNode(createParameters({ rate: 2, options: { waitForCompletion: true, maxWaitSeconds: 60 } })),
			),
			{
				credentials: credentials(),
				sendDataToUI: (type, data) => {
					if (type === 'sendConsoleMessage') messages.push(data);
				},
			},
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		const [out] = result.outputOf('Convo').map((item) => item.json);
		expect(out).toMatchObject({
			state: 'completed',
			total: 4,
			accepted: 3,
			rejected: 1,
			counts: { sent: 3, rejected: 1 },
			wait_timed_out: false,
		});
		// At 2 per second three sends take over a second: the node waited for them.
		expect(out.waited_seconds).toBeGreaterThanOrEqual(1);
		expect((await runner_('GET', `/api/campaigns/${String(out.campaign_id)}`)).state).toBe('completed');
		const said = JSON.stringify(messages);
		expect(said).toContain(`Campaign ${String(out.campaign_id)}: running`);
		expect(said).toContain(`Campaign ${String(out.campaign_id)}: completed, 3 of 4 sent`);
	});

	it('past Max Wait the node answers the campaign as it is, flagged wait_timed_out, and the campaign goes on', async () => {
		const started = Date.now();
		const result = await runNode(
			createParameters({ rate: 1, options: { waitForCompletion: true, maxWaitSeconds: 2 } }),
			itemsOf(11, 30),
		);
		const tookMs = Date.now() - started;
		expect(result.error).toBeUndefined();
		const [out] = result.json;
		expect(out).toMatchObject({ state: 'running', wait_timed_out: true });
		expect(out.waited_seconds).toBeGreaterThanOrEqual(2);
		expect(tookMs).toBeLessThan(10_000);
		expect((await runner_('GET', `/api/campaigns/${String(out.campaign_id)}`)).state).toBe('running');
		await runner_('POST', `/api/campaigns/${String(out.campaign_id)}/cancel`);
	});

	it('Output "Each Input Item With Its Outcome": every input item keeps its fields and gets its own outcome, paired to it', async () => {
		const items = itemsOf(12, 5);
		items[1].phone = 'call me maybe';
		items[3].phone = items[0].phone;
		const result = await runNode(
			createParameters({ rate: 50, options: { waitForCompletion: true, output: 'recipients' } }),
			items,
		);
		expect(result.error).toBeUndefined();
		expect(result.json).toHaveLength(5);
		expect(result.output.map((item) => item.pairedItem)).toEqual([0, 1, 2, 3, 4].map((item) => ({ item })));
		const sends = await templateSends(runner.sandbox);
		result.json.forEach((out, index) => {
			expect(out).toMatchObject({
				customer_id: `cust-12-${index}`,
				name: `Customer ${index}`,
				phone: items[index].phone,
			});
			const campaign = out.campaign as IDataObject;
			expect(campaign).toMatchObject({ campaign_state: 'completed', line: index + 1, wait_timed_out: false });
			if (index === 1 || index === 3) {
				expect([index, campaign.outcome]).toEqual([index, 'rejected']);
				expect(campaign.error).toEqual(expect.any(String));
			} else {
				expect([index, campaign.outcome]).toEqual([index, 'sent']);
				// The message id is the one the service's own log holds for this customer's phone.
				const sent = sends.filter((message) => message.to === String(items[index].phone).slice(1));
				expect(sent.map((message) => message.uuid)).toEqual([campaign.message_id]);
			}
		});
	});

	it('a Campaign Key that names a campaign of other input fails the join instead of pairing the wrong customers', async () => {
		const first = await runNode(
			createParameters({ rate: 50, additionalFields: { campaignKey: 'everyday-join' } }),
			itemsOf(13, 2),
		);
		expect(first.error).toBeUndefined();
		const other = await runNode(
			createParameters({
				rate: 50,
				additionalFields: { campaignKey: 'everyday-join' },
				options: { output: 'recipients' },
			}),
			itemsOf(14, 2),
		);
		expect(other.error?.message).toBe(
			`Campaign ${String(first.json[0].campaign_id)} holds other recipients than this input`,
		);
		expect(other.error?.context?.itemIndex).toBeUndefined();
	});
});

describe('#21 item 9: Campaign → Create names the campaign', () => {
	it("Campaign Name is kept (trimmed) and shown by the runner and From List; left empty, the campaign takes the workflow's name", async () => {
		const named = await runNode(createParameters({ campaignName: '  March promo  ', rate: 1 }), itemsOf(40, 2));
		expect(named.error).toBeUndefined();
		const namedId = String(named.json[0].campaign_id);
		expect(named.json[0]).toMatchObject({ name: 'March promo' });
		expect(await runner_('GET', `/api/campaigns/${namedId}`)).toMatchObject({ name: 'March promo' });

		const fromWorkflow = await run({
			...itemsThen(itemsOf(41, 1), convoNode(createParameters({ rate: 1 }))),
			name: 'Spring customers workflow',
		});
		expect(fromWorkflow.error).toBeUndefined();
		const workflowId = String(fromWorkflow.json[0].campaign_id);
		expect(fromWorkflow.json[0].name).toBe('Spring customers workflow');
		expect(await runner_('GET', `/api/campaigns/${workflowId}`)).toMatchObject({ name: 'Spring customers workflow' });

		const found = await listSearch('searchCampaigns', 'march promo');
		expect(found.results.map((r) => r.value)).toEqual([namedId]);
		expect(found.results[0].name).toBe(`March promo (${namedId})`);
		for (const id of [namedId, workflowId]) await runner_('POST', `/api/campaigns/${id}/cancel`);
	});

	it('a Campaign Name on two lines or over 120 characters fails the node naming Campaign Name, before anything is created', async () => {
		const before = (await runner_('GET', '/api/campaigns?limit=1')).total;
		const twoLines = await runNode(createParameters({ campaignName: 'March\npromo' }), itemsOf(42, 1));
		expect(twoLines.error?.message).toBe(
			'Campaign Name must be one line of text, without control characters (tabs, line breaks)',
		);
		expect(twoLines.error?.description).toMatch(/^Nothing was sent/);
		const tooLong = await runNode(createParameters({ campaignName: 'x'.repeat(121) }), itemsOf(42, 1));
		expect(tooLong.error?.message).toBe('Campaign Name must be 1 to 120 characters');
		expect((await runner_('GET', '/api/campaigns?limit=1')).total).toBe(before);
	});
});

describe('Campaign → Delete', () => {
	it("deletes a finished campaign for good, reading campaign_id of its input by default; one that may still send fails the item with the runner's reason and stays", async () => {
		const created = await runner_<IDataObject>('POST', '/api/campaigns', {
			template_id: positionalTemplate(runner.business).id,
			from: runner.business.phoneNumbers[0],
			rate: 1,
			recipients: itemsOf(43, 3).map((item) => ({ phone: item.phone, 1: item.name, 2: item.order })),
		});
		const id = String(created.id);
		const refused = await runNode({ resource: 'campaign', operation: 'delete', campaignId: id }, [{}]);
		expect(`${refused.error?.message} ${refused.error?.description}`).toMatch(
			/is running; it can be deleted only when completed or cancelled or failed \(cancel it first\)/,
		);
		expect((await runner_('GET', `/api/campaigns/${id}`)).state).toBe('running');

		await runner_('POST', `/api/campaigns/${id}/cancel`);
		const deleted = await waitFor('the cancelled campaign to be deleted', async () => {
			const attempt = await runNode({ resource: 'campaign', operation: 'delete' }, [{ campaign_id: id }]);
			return attempt.error ? undefined : attempt;
		});
		expect(deleted.json).toEqual([{ campaign_id: id, id, deleted: true }]);
		await expect(runner_('GET', `/api/campaigns/${id}`)).rejects.toThrow(/404/);
	});
});
