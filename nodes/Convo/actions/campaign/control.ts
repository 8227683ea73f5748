import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runnerJson } from '../../runnerTransport';
import { campaignIdField, runnerIdValue } from './fields';

export type ControlAction = 'pause' | 'resume' | 'cancel';

/** Pause, Resume and Cancel: the same field and call, one route each. */
export function controlOperation(action: ControlAction) {
	const description: INodeProperties[] = updateDisplayOptions({ show: { resource: ['campaign'], operation: [action] } }, [campaignIdField]);
	async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
		const id = runnerIdValue.call(this, 'campaignId', 'Campaign ID', itemIndex);
		// Each is a state change that is the same when repeated, so a retry is harmless.
		const answer = await runnerJson.call(this, { method: 'POST', path: `/api/campaigns/${id}/${action}`, body: {}, itemIndex });
		return { campaign_id: id, ...answer };
	}
	return { description, execute };
}
