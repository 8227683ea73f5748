import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { RUNNER_ID_PATTERN, RUNNER_ID_RULE } from '../../../shared/runnerRoutes';

interface RunnerIdFieldOptions {
	name: string;
	displayName: string;
	/** What the id names and where the user finds it (the default's source is added per version). */
	description: string;
	/** The `listSearch` method (ConvoV1's `methods`) that lists these from the runner. */
	searchListMethod: string;
	/** What version 1 reads when left as it is: the id a previous Convo node put in its output. */
	fromPreviousNode: string;
	/** A real id of this kind, as the runner makes them (runner/src/keys.ts newId). */
	example: string;
}

/** Node versions whose runner id fields open on From List (n8n's own default for a locator). */
const LIST_DEFAULT_VERSIONS = { _cnd: { gte: 1.1 } };

/**
 * A campaign or reindex run of the runner (ids of its own form, not UUIDs) as a resource locator:
 * From List asks the runner which there are; By ID takes the id, checked in the editor. Older
 * workflows that saved a plain string still run: `runnerIdValue` reads both shapes.
 *
 * Two entries of one parameter, by node version. n8n's editor disables From List while the value
 * is an expression, so version 1's default (the previous node's id, an expression) left From List
 * greyed out; version 1.1 opens on From List, empty. Version 1 keeps its default because a
 * workflow written without this parameter takes the default of the version it names.
 */
export function runnerIdField(options: RunnerIdFieldOptions): INodeProperties[] {
	const field = (
		version: number | typeof LIST_DEFAULT_VERSIONS,
		value: INodeProperties['default'],
		source: string,
	): INodeProperties => ({
		displayName: options.displayName,
		name: options.name,
		type: 'resourceLocator',
		required: true,
		default: value,
		description: options.description.replace('{source}', source),
		displayOptions: { show: { '@version': [version] } },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: `Select a ${options.displayName.replace(/ ID$/, '').toLowerCase()}...`,
				typeOptions: { searchListMethod: options.searchListMethod, searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: `e.g. ${options.example}`,
				validation: [
					{
						type: 'regex',
						properties: {
							regex: RUNNER_ID_PATTERN.source,
							errorMessage: `${options.displayName} is ${RUNNER_ID_RULE}`,
						},
					},
				],
			},
		],
	});
	return [
		field(1, { mode: 'id', value: `={{ $json.${options.fromPreviousNode} }}` }, ', the default here'),
		field(LIST_DEFAULT_VERSIONS, { mode: 'list', value: '' }, ''),
	];
}

export const campaignIdFields = runnerIdField({
	name: 'campaignId',
	displayName: 'Campaign ID',
	description:
		'Campaign of the runner: pick it from the list, or its ID ' +
		'(campaign_id in the output of Campaign → Create{source}; ' +
		"also shown in the runner's console and `convo-runner campaign list`)",
	searchListMethod: 'searchCampaigns',
	fromPreviousNode: 'campaign_id',
	example: 'cmwt6cul0dwet7n',
});

export const runIdFields = runnerIdField({
	name: 'runId',
	displayName: 'Run ID',
	description:
		'Reindex run of the runner: pick it from the list, ' +
		'or its ID (id in the output of Reindex Run → Start{source}; also shown by `convo-runner reindex list`)',
	searchListMethod: 'searchReindexRuns',
	fromPreviousNode: 'id',
	example: 'rmwt6cul0dwet7n',
});

/**
 * The id of a runner id field (a locator, or a plain string from an older workflow), checked before anything is sent.
 */
export function runnerIdValue(this: IExecuteFunctions, name: string, label: string, itemIndex: number): string {
	const value = String(this.getNodeParameter(name, itemIndex, '', { extractValue: true }) ?? '').trim();
	if (!RUNNER_ID_PATTERN.test(value)) {
		throw new NodeOperationError(
			this.getNode(),
			value === '' ? `${label} is empty` : `${label} "${value.slice(0, 80)}" is not a runner ID`,
			{
				itemIndex,
				description:
					value === ''
						? `Nothing was sent. Pick it From List or give its ID (Create and Start put it in their output).`
						: `Nothing was sent. ${label} is ${RUNNER_ID_RULE}, as the runner answered it at create.`,
			},
		);
	}
	return value;
}
