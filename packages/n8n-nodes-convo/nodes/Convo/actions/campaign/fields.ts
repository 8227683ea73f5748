import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { RUNNER_ID_PATTERN, RUNNER_ID_RULE } from '../../../shared';

interface RunnerIdFieldOptions {
	name: string;
	displayName: string;
	description: string;
	/** The `listSearch` method (ConvoV1's `methods`) that lists these from the runner. */
	searchListMethod: string;
	/** What the field reads when left as it is: the id a previous Convo node put in its output. */
	fromPreviousNode: string;
	/** A real id of this kind, as the runner makes them (runner/src/keys.ts newId). */
	example: string;
}

/**
 * A campaign or reindex run of the runner (ids of its own form, not UUIDs) as a resource locator:
 * From List asks the runner which there are; By ID takes the id, checked in the editor. Its default
 * takes the id from the previous node's output, so Create → Get needs no mapping. Older workflows
 * that saved a plain string still run: `runnerIdValue` reads both shapes.
 */
export function runnerIdField(options: RunnerIdFieldOptions): INodeProperties {
	return {
		displayName: options.displayName,
		name: options.name,
		type: 'resourceLocator',
		required: true,
		default: { mode: 'id', value: `={{ $json.${options.fromPreviousNode} }}` },
		description: options.description,
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
						properties: { regex: RUNNER_ID_PATTERN.source, errorMessage: `${options.displayName} is ${RUNNER_ID_RULE}` },
					},
				],
			},
		],
	};
}

export const campaignIdField = runnerIdField({
	name: 'campaignId',
	displayName: 'Campaign ID',
	description:
		'Campaign of the runner: pick it from the list, or its ID (campaign_id in the output of Campaign → Create, the default here; also shown in the runner\'s console and `convo-runner campaign list`)',
	searchListMethod: 'searchCampaigns',
	fromPreviousNode: 'campaign_id',
	example: 'cmwt6cul0dwet7n',
});

export const runIdField = runnerIdField({
	name: 'runId',
	displayName: 'Run ID',
	description:
		'Reindex run of the runner: pick it from the list, or its ID (id in the output of Reindex Run → Start, the default here; also shown by `convo-runner reindex list`)',
	searchListMethod: 'searchReindexRuns',
	fromPreviousNode: 'id',
	example: 'rmwt6cul0dwet7n',
});

/** The id of a runner id field (a locator, or a plain string from an older workflow), checked before anything is sent. */
export function runnerIdValue(this: IExecuteFunctions, name: string, label: string, itemIndex: number): string {
	const value = String(this.getNodeParameter(name, itemIndex, '', { extractValue: true }) ?? '').trim();
	if (!RUNNER_ID_PATTERN.test(value)) {
		throw new NodeOperationError(this.getNode(), value === '' ? `${label} is empty` : `${label} "${value.slice(0, 80)}" is not a runner ID`, {
			itemIndex,
			description:
				value === ''
					? `Nothing was sent. Pick it From List or give its ID. Left at its default, ${label} reads the id from the input item, as Create or Start put it in their output.`
					: `Nothing was sent. ${label} is ${RUNNER_ID_RULE}, as the runner answered it at create.`,
		});
	}
	return value;
}
