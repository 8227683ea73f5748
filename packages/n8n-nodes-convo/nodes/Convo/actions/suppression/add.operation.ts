import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { AddSuppressionBody } from '../../../shared/runnerApi/suppression';

import { runnerAnswer } from '../../transport/runner';
import { labelOf, phoneField, phoneValue } from './fields';

const properties: INodeProperties[] = [
	phoneField(
		'add',
		'Phone to put on the suppression list, with country code: no marketing campaign of the runner sends to it',
	),
	{
		displayName: 'Reason',
		name: 'reason',
		type: 'string',
		default: '',
		description:
			'Why, kept with the entry and shown in campaign reports (at most 200 characters); empty: "added by a workflow"',
		displayOptions: { show: { resource: ['suppression'], operation: ['add'] } },
	},
];

export const description = properties;

export const apiFields: Readonly<Record<string, string>> = { phone: 'phone', reason: 'reason' };

/**
 * The entry (phone, reason, source workflow, at) and `added`: false
 * when the phone was on the list already (its first entry kept).
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const reason = String(this.getNodeParameter('reason', itemIndex, '') ?? '').trim();
	const body: AddSuppressionBody = {
		phone: phoneValue.call(this, itemIndex),
		source: 'workflow',
		...(reason === '' ? {} : { reason }),
	};
	return (await runnerAnswer(this, 'addSuppression', { body: body as IDataObject, labelOf, itemIndex })) as IDataObject;
}
