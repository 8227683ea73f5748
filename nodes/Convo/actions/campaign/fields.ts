import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { RUNNER_ID_PATTERN, RUNNER_ID_RULE } from 'convo-contract';

/** A campaign or reindex run by the id the runner answered at create (not a UUID). */
export function runnerIdField(name: string, displayName: string, description: string): INodeProperties {
	return {
		displayName,
		name,
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. cmp_4k2f9x1q',
		description,
	};
}

export const campaignIdField = runnerIdField(
	'campaignId',
	'Campaign ID',
	'ID of a campaign of the runner: campaign_id in the output of Campaign → Create, or shown in the runner\'s console and `convo-runner campaign list`',
);

/** The id typed into a runner id field, checked before anything is sent. */
export function runnerIdValue(this: IExecuteFunctions, name: string, label: string, itemIndex: number): string {
	const value = String(this.getNodeParameter(name, itemIndex, '') ?? '').trim();
	if (!RUNNER_ID_PATTERN.test(value)) {
		throw new NodeOperationError(this.getNode(), value === '' ? `${label} is empty` : `${label} "${value.slice(0, 80)}" is not a runner ID`, {
			itemIndex,
			description: `Nothing was sent. ${label} is ${RUNNER_ID_RULE}, as the runner answered it at create.`,
		});
	}
	return value;
}
