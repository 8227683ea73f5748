import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodeType,
	INodeTypeBaseDescription,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { searchCampaigns, searchReindexRuns } from '../methods/listSearch';
import { operationsWithBatching, router } from '../actions/router';
import * as agent from '../actions/agent';
import * as campaign from '../actions/campaign';
import * as contact from '../actions/contact';
import * as conversation from '../actions/conversation';
import * as dailyBudget from '../actions/dailyBudget';
import { DRAW_ON_BUDGET } from '../actions/dailyBudget/draw';
import * as message from '../actions/message';
import * as reindexRun from '../actions/reindexRun';
import * as searchItem from '../actions/searchItem';
import * as suppression from '../actions/suppression';
import * as template from '../actions/template';

/** Resources served by the messaging API (v1); every other resource uses the external API (v2). */
const MESSAGING_RESOURCES = ['message'];
const EXTERNAL_RESOURCES = ['template', 'contact', 'conversation', 'searchItem', 'agent'];
/** Resources served by convo-runner's control API (Convo Runner API credential). */
const RUNNER_RESOURCES = ['campaign', 'reindexRun', 'suppression', 'dailyBudget'];
/** Sends that may draw on the runner's daily budget (actions/dailyBudget/draw.ts), then needing its credential too. */
const BUDGET_SENDS = ['message', 'template'];

const batchingField: INodeProperties = {
	displayName: 'Batching',
	name: 'batching',
	type: 'collection',
	placeholder: 'Add Batching Option',
	default: {},
	description: 'How many items are sent to the service at the same time',
	options: [
		{
			displayName: 'Requests at Once',
			name: 'requestsAtOnce',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 50 },
			default: 1,
			description:
				'How many items are sent to the service at the same time. 1 sends them one after another, ' +
				'in order. The output keeps the input order either way.',
		},
	],
};

/**
 * Batching, once per resource and shown only for the operations it changes (one field per
 * resource because n8n's displayOptions cannot name "operation X of resource Y" otherwise); the
 * parameter keeps one name, so saved workflows keep their value.
 */
const batching: INodeProperties[] = Object.entries(operationsWithBatching())
	.filter(([, operations]) => operations.length > 0)
	.map(([resource, operations]) => ({
		...batchingField,
		displayOptions: { show: { resource: [resource], operation: operations } },
	}));

/**
 * Versions 1 and 1.1 of the Convo node: its fields and its execute. 1.1 differs only in the
 * defaults of Campaign ID and Run ID (actions/campaign/fields.ts). A v2 gets a file beside it.
 */
export class ConvoV1 implements INodeType {
	description: INodeTypeDescription;

	constructor(baseDescription: INodeTypeBaseDescription) {
		this.description = {
			...baseDescription,
			version: [1, 1.1],
			defaults: { name: 'Convo' },
			usableAsTool: true,
			inputs: [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main],
			credentials: [
				{ name: 'convoApi', required: true, displayOptions: { show: { resource: MESSAGING_RESOURCES } } },
				{ name: 'convoExternalApi', required: true, displayOptions: { show: { resource: EXTERNAL_RESOURCES } } },
				{
					name: 'convoRunnerApi',
					required: true,
					// One entry per credential (n8n-core reads the first of a name): the runner's resources, and
					// a send that draws on the daily budget. Message → Get Status never does.
					displayOptions: {
						show: { resource: [...RUNNER_RESOURCES, ...BUDGET_SENDS] },
						hide: { operation: ['getStatus'], [DRAW_ON_BUDGET]: [false] },
					},
				},
			],
			properties: [
				{
					displayName: 'Resource',
					name: 'resource',
					type: 'options',
					noDataExpression: true,
					options: [
						{ name: 'Agent', value: 'agent', description: 'AI agents that answer conversations' },
						{
							name: 'Campaign',
							value: 'campaign',
							description:
								'Send a template to a whole list through convo-runner, ' +
								'durably and at a safe rate (Convo Runner API credential)',
						},
						{
							name: 'Contact',
							value: 'contact',
							description: 'Name, tags, custom fields, assignment, messages and conversation state of a contact',
						},
						{ name: 'Conversation', value: 'conversation', description: 'Look up a conversation and its messages' },
						{
							name: 'Daily Budget',
							value: 'dailyBudget',
							description:
								"The business's daily messaging limit that every campaign and budget-drawing send shares " +
								'(Convo Runner API credential)',
						},
						{
							name: 'Message',
							value: 'message',
							description: 'Send messages and read their delivery status (messaging API, Convo API credential)',
						},
						{
							name: 'Reindex Run',
							value: 'reindexRun',
							description:
								'Keep a search collection in sync with a feed through convo-runner (Convo Runner API credential)',
						},
						{ name: 'Search Item', value: 'searchItem', description: 'Items of search collections' },
						{
							name: 'Suppression',
							value: 'suppression',
							description:
								'Phones no marketing campaign sends to: opt-outs (STOP) ' +
								'and phones put there (Convo Runner API credential)',
						},
						{ name: 'Template', value: 'template', description: 'Send approved template messages' },
					],
					default: 'message',
				},
				...message.description,
				...template.description,
				...contact.description,
				...conversation.description,
				...searchItem.description,
				...agent.description,
				...campaign.description,
				...reindexRun.description,
				...suppression.description,
				...dailyBudget.description,
				...batching,
			],
		};
	}

	methods = {
		// From List of Campaign ID and Run ID (actions/campaign/fields.ts).
		listSearch: { searchCampaigns, searchReindexRuns },
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
