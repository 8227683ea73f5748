import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';
import { labelOf, phoneField, phoneValue } from './fields';

const properties: INodeProperties[] = [
	phoneField('remove', 'Phone to take off the suppression list, with country code: campaigns send to it again'),
];

export const description = properties;

/** `removed`: false when the phone was not on the list (nothing to do, not an error). */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	return (await runnerAnswer(this, 'removeSuppression', {
		id: phoneValue.call(this, itemIndex),
		labelOf,
		itemIndex,
	})) as IDataObject;
}
