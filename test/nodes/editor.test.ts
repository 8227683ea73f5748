/**
 * What a new user meets in n8n's editor before running anything: the nodes panel's entry of the
 * pack, the resource locators' From List, and the lines of its dropdown. n8n's editor is not run
 * here; each test holds the description to the property the editor's source depends on (cited in
 * the records docs/decisions/nodes/trigger-description-in-nodes-panel.md,
 * runner-id-locators-open-on-from-list.md and from-list-search-and-labels.md), and the listSearch
 * methods are called as the editor calls them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
	IDataObject,
	INode,
	INodeListSearchResult,
	INodeParameterResourceLocator,
	INodeParameters,
	INodeProperties,
	INodePropertyOptions,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';
import { LoadOptionsContext } from 'n8n-core';

import { Convo } from '../../packages/n8n-nodes-convo/nodes/Convo/Convo.node';
import { LIST_NAME_MAX } from '../../packages/n8n-nodes-convo/nodes/Convo/methods/listSearch';
import { ConvoRunnerTrigger } from '../../packages/n8n-nodes-convo/nodes/ConvoRunnerTrigger/ConvoRunnerTrigger.node';
import { ConvoTrigger } from '../../packages/n8n-nodes-convo/nodes/ConvoTrigger/ConvoTrigger.node';
import { convoNode, createAdditionalData, createWorkflow, itemsThen, runWorkflow } from '../harness/workflow';

const PACKAGE = 'n8n-nodes-convo';
const convo = new Convo();
const defaultVersion = Number(convo.description.defaultVersion);
const atDefault = convo.getNodeType(defaultVersion).description;

type PanelEntry = { name: string; displayName: string; description: string; group: string[] };

/**
 * The entries of n8n's nodes panel for these node types, as the editor builds them
 * (editor-ui nodeCreator/composables/useActionsGeneration.ts, generateMergedNodesAndActions): a
 * node that is not a trigger is an entry; a trigger whose name without "Trigger" is such a node
 * with actions is merged into that entry, whose description becomes the trigger's; any other
 * trigger is an entry of its own.
 */
function panelEntries(types: INodeTypeDescription[]): PanelEntry[] {
	const entry = (type: INodeTypeDescription): PanelEntry => ({
		name: `${PACKAGE}.${type.name}`,
		displayName: type.displayName,
		description: type.description,
		group: type.group,
	});
	// A node with a Resource selector has actions in the panel (resourceCategories in the same file).
	const hasActions = (type: INodeTypeDescription) => type.properties.some((property) => property.name === 'resource');
	const entries = types
		.filter((type) => !type.group.includes('trigger'))
		.map((type) => ({ entry: entry(type), actions: hasActions(type) }));
	for (const trigger of types.filter((type) => type.group.includes('trigger'))) {
		const app = entries.find(({ entry: { name } }) => name === `${PACKAGE}.${trigger.name}`.replace('Trigger', ''));
		if (app?.actions) app.entry.description = trigger.description;
		else entries.push({ entry: entry(trigger), actions: false });
	}
	return entries.map(({ entry: e }) => e);
}

describe("n8n's nodes panel", () => {
	const entries = panelEntries([atDefault, new ConvoTrigger().description, new ConvoRunnerTrigger().description]);

	it('describes the Convo entry as the action node, and the trigger it holds as a trigger', () => {
		// Convo Trigger is merged into the Convo entry: its description is what that entry shows.
		expect(entries.map((e) => e.displayName)).toEqual(['Convo', 'Convo Runner Trigger']);
		const app = entries[0];
		expect(app.description.startsWith(atDefault.description)).toBe(true);
		expect(app.description).not.toMatch(/^Starts the workflow/);
		expect(app.description).toMatch(/start workflows when a message is received or sent$/);
		// Inside that entry the trigger's events are listed under Triggers, each by its action.
		const triggerOn = new ConvoTrigger().description.properties.find((p) => p.displayName === 'Trigger On');
		expect((triggerOn?.options as INodePropertyOptions[]).map((o) => o.action)).toEqual([
			'On message received',
			'On message sent',
			'On any message',
		]);
	});

	it('describes the Convo Runner Trigger entry (a trigger of its own) as a trigger', () => {
		const runner = entries[1];
		expect(runner.group).toEqual(['trigger']);
		expect(runner.description).toMatch(/^Starts the workflow when/);
	});
});

/** Every resource locator of the node with the resource and operation it is shown for. */
function locators(
	description: INodeTypeDescription,
): Array<{ field: INodeProperties; resource: string; operation: string }> {
	return description.properties
		.filter((field) => field.type === 'resourceLocator')
		.flatMap((field) =>
			((field.displayOptions?.show?.resource ?? []) as string[]).flatMap((resource) =>
				((field.displayOptions?.show?.operation ?? []) as string[]).map((operation) => ({
					field,
					resource,
					operation,
				})),
			),
		);
}

/** The value n8n gives a new node's parameter (a node added in the editor, at the default version). */
function newNodeValue(
	version: number,
	resource: string,
	operation: string,
	name: string,
): INodeParameterResourceLocator {
	const node = { ...convoNode({ resource, operation }), id: 'n', typeVersion: version, position: [0, 0] } as INode;
	const parameters = NodeHelpers.getNodeParameters(
		atDefault.properties,
		{ resource, operation } as INodeParameters,
		true,
		false,
		node,
		atDefault,
	) as IDataObject;
	return parameters[name] as unknown as INodeParameterResourceLocator;
}

describe('resource locators open usable', () => {
	it("never default to an expression at the node's default version, and open on From List where there is one", () => {
		// n8n's ResourceLocator.vue disables the From List option while isValueExpression is true
		// (`:disabled="isValueExpression && mode.name === 'list'"`), i.e. while the value starts with "=".
		const seen: string[] = [];
		const node = { typeVersion: defaultVersion };
		for (const { field, resource, operation } of locators(atDefault)) {
			// Only the entry n8n shows at this version (a parameter may have one entry per version).
			if (!NodeHelpers.displayParameter({ resource, operation }, field, node, atDefault)) continue;
			seen.push(`${resource}.${operation}.${field.name}`);
			const value = newNodeValue(defaultVersion, resource, operation, field.name);
			expect([resource, operation, field.name, String(value.value).startsWith('=')]).toEqual([
				resource,
				operation,
				field.name,
				false,
			]);
			if (field.modes?.some((mode) => mode.name === 'list')) {
				expect([resource, operation, field.name, value]).toEqual([
					resource,
					operation,
					field.name,
					{ __rl: true, mode: 'list', value: '' },
				]);
			}
		}
		for (const id of [
			'campaign.get.campaignId',
			'campaign.pause.campaignId',
			'campaign.getReport.campaignId',
			'reindexRun.get.runId',
		])
			expect(seen).toContain(id);
	});

	it("keep the previous node's id as the default of version 1, so workflows written for it run as before", () => {
		expect(Object.keys(convo.nodeVersions).sort()).toEqual(['1', '1.1']);
		expect(newNodeValue(1, 'campaign', 'get', 'campaignId')).toEqual({
			__rl: true,
			mode: 'id',
			value: '={{ $json.campaign_id }}',
		});
		expect(newNodeValue(1, 'reindexRun', 'get', 'runId')).toEqual({ __rl: true, mode: 'id', value: '={{ $json.id }}' });
	});
});

/** A runner's list routes, with what the test plants (the contract's answer shapes). */
function fakeRunner(campaigns: IDataObject[], runs: IDataObject[]): Promise<{ url: string; server: Server }> {
	const server = createServer((request, response) => {
		const url = new URL(request.url ?? '/', 'http://runner');
		let body: unknown = { message: 'not found' };
		if (url.pathname === '/api/campaigns') {
			const offset = Number(url.searchParams.get('offset') ?? 0);
			const limit = Number(url.searchParams.get('limit') ?? 50);
			// The runner's filters: search= a part of the name or id (any case), state= a state.
			const search = (url.searchParams.get('search') ?? '').toLowerCase();
			const state = url.searchParams.get('state');
			const matching = campaigns.filter(
				(c) =>
					(state === null || c.state === state) &&
					[c.id, c.name].some((text) => String(text).toLowerCase().includes(search)),
			);
			body = { items: matching.slice(offset, offset + limit), total: matching.length, limit, offset };
		} else if (url.pathname === '/api/reindex') body = { runs, schedules: [] };
		else if (url.pathname.startsWith('/api/campaigns/'))
			body = campaigns.find((c) => c.id === url.pathname.split('/')[3]) ?? body;
		response.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
		response.end(JSON.stringify(body));
	});
	return new Promise((resolve) =>
		server.listen(0, '127.0.0.1', () =>
			resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }),
		),
	);
}

const LONG_NAME = `Spring sale for returning customers in Berlin, Hamburg and Munich, second reminder with the new catalogue (${'x'.repeat(10)})`;
const campaigns: IDataObject[] = [
	{ id: 'cmwt6cul0dwet7n', name: LONG_NAME, state: 'running', total: 300, counts: { sent: 120, pending: 180 } },
	{ id: 'cmwt6cul0dwet7m', name: 'March promo', state: 'paused', total: 2, counts: { sent: 0, pending: 2 } },
];
const runs: IDataObject[] = [
	{ id: 'rmwt6cul0dwet7n', state: 'completed', collection: '9b2d6e0a-4c1f-4e8b-a3d2-5f7c1e9b0a64', counts: {} },
];

describe('From List lines', () => {
	let runner: { url: string; server: Server };
	const credentials = () => ({ convoRunnerApi: { runnerUrl: runner.url, token: 'editor-test-token-0123456789' } });
	beforeAll(async () => {
		runner = await fakeRunner(campaigns, runs);
	});
	afterAll(() => new Promise<void>((resolve) => runner.server.close(() => resolve())));

	const methods =
		(
			convo.getNodeType(defaultVersion) as {
				methods?: {
					listSearch?: Record<
						string,
						(this: LoadOptionsContext, filter?: string, token?: string) => Promise<INodeListSearchResult>
					>;
				};
			}
		).methods?.listSearch ?? {};

	async function search(method: string, filter?: string): Promise<INodeListSearchResult> {
		const node = {
			...convoNode({ resource: 'campaign', operation: 'get' }),
			id: 'convo',
			typeVersion: defaultVersion,
			position: [0, 0],
		} as INode;
		const context = new LoadOptionsContext(
			createWorkflow({ nodes: [node], connections: {} }),
			node,
			createAdditionalData(credentials()),
			'parameters.campaignId',
		);
		return await methods[method].call(context, filter);
	}

	it('show the name and the id of every item, the name shortened so that the id stays in view', async () => {
		// Every listSearch method of the node is covered here.
		expect(Object.keys(methods).sort()).toEqual(['searchCampaigns', 'searchReindexRuns']);
		const found = {
			searchCampaigns: (await search('searchCampaigns')).results,
			searchReindexRuns: (await search('searchReindexRuns')).results,
		};
		for (const [method, results] of Object.entries(found)) {
			expect([method, results.length]).toEqual([method, method === 'searchCampaigns' ? 2 : 1]);
			for (const { name, value } of results) {
				expect(name.endsWith(` (${String(value)})`)).toBe(true);
				expect(name.length).toBeLessThanOrEqual(LIST_NAME_MAX + ` (${String(value)})`.length);
			}
		}
		expect(found.searchCampaigns.map((r) => r.name)).toEqual([
			`${LONG_NAME.slice(0, LIST_NAME_MAX - 1).trimEnd()}… (cmwt6cul0dwet7n)`,
			'March promo (cmwt6cul0dwet7m)',
		]);
		// A run has no name: the collection it fills stands for one.
		expect(found.searchReindexRuns.map((r) => r.name)).toEqual([
			`${`Collection ${String(runs[0].collection)}`.slice(0, LIST_NAME_MAX - 1)}… (rmwt6cul0dwet7n)`,
		]);
	});

	it('keep nothing that goes stale in the name the editor caches (state, counts), and still find items by them', async () => {
		const all = [...(await search('searchCampaigns')).results, ...(await search('searchReindexRuns')).results]
			.map((r) => r.name)
			.join('\n');
		expect(all).not.toMatch(/running|paused|completed|sent/);
		expect((await search('searchCampaigns', 'PAUSED')).results.map((r) => r.value)).toEqual(['cmwt6cul0dwet7m']);
		expect((await search('searchCampaigns', 'catalogue')).results.map((r) => r.value)).toEqual(['cmwt6cul0dwet7n']);
		expect((await search('searchReindexRuns', 'completed')).results.map((r) => r.value)).toEqual(['rmwt6cul0dwet7n']);
	});

	it('a new Convo node (default version) picks its campaign From List and runs; left empty it does not start', async () => {
		const node = (parameters: IDataObject) => ({ ...convoNode(parameters), typeVersion: defaultVersion });
		const picked = await runWorkflow(
			itemsThen(
				[{}],
				node({
					resource: 'campaign',
					operation: 'get',
					campaignId: {
						__rl: true,
						mode: 'list',
						value: 'cmwt6cul0dwet7m',
						cachedResultName: 'March promo (cmwt6cul0dwet7m)',
					},
				}),
			),
			{ credentials: credentials() },
		);
		expect(picked.errorOf('Convo')).toBeUndefined();
		expect(picked.outputOf('Convo')[0].json).toMatchObject({ id: 'cmwt6cul0dwet7m', state: 'paused' });
		// Left empty, n8n itself refuses to start the run and the editor marks the field, as for its own nodes;
		// the input's campaign_id is not read unless the field asks for it.
		await expect(
			runWorkflow(itemsThen([{ campaign_id: 'cmwt6cul0dwet7m' }], node({ resource: 'campaign', operation: 'get' })), {
				credentials: credentials(),
			}),
		).rejects.toThrow(/Parameter "Campaign ID" is required/);
	});
});
