import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';
import { campaignIdFields, runnerIdValue } from './fields';

const properties: INodeProperties[] = [...campaignIdFields];

export const description = updateDisplayOptions({ show: { resource: ['campaign'], operation: ['get'] } }, properties);

/** The campaign's status as the runner has it: state, counts per outcome, rate, ETA, last error, settings. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const id = runnerIdValue.call(this, 'campaignId', 'Campaign ID', itemIndex);
	return (await runnerAnswer(this, 'getCampaign', { id, itemIndex })) as IDataObject;
}
