import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';
import { campaignIdFields, runnerIdValue } from './fields';

export const description: INodeProperties[] = updateDisplayOptions(
	{ show: { resource: ['campaign'], operation: ['delete'] } },
	campaignIdFields,
);

/**
 * Deletes a finished campaign from the runner, with its recipients and report. The runner refuses
 * one that may still send. Repeated, it fails with "No campaign": an execution run again has
 * nothing more to delete.
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const id = runnerIdValue.call(this, 'campaignId', 'Campaign ID', itemIndex);
	const answer = await runnerAnswer(this, 'deleteCampaign', { id, itemIndex });
	return { campaign_id: id, ...answer } as IDataObject;
}
