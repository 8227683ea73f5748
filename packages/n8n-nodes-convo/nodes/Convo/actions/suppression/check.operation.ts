import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';
import { labelOf, phoneField, phoneValue } from './fields';

const properties: INodeProperties[] = [phoneField('check', 'Phone to look up, with country code')];

export const description = properties;

/**
 * `suppressed` true or false, and the entry (reason, source, at) when it is on the list: what an IF node branches on.
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	return (await runnerAnswer(this, 'checkSuppression', {
		id: phoneValue.call(this, itemIndex),
		labelOf,
		itemIndex,
	})) as IDataObject;
}
