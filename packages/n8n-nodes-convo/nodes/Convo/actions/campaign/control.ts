import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';
import { campaignIdFields, runnerIdValue } from './fields';

export type ControlAction = 'pause' | 'resume' | 'cancel';

const ROUTES = { pause: 'pauseCampaign', resume: 'resumeCampaign', cancel: 'cancelCampaign' } as const;

/** Pause, Resume and Cancel: the same field and call, one route each. */
export function controlOperation(action: ControlAction) {
	const description: INodeProperties[] = updateDisplayOptions(
		{ show: { resource: ['campaign'], operation: [action] } },
		campaignIdFields,
	);
	async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
		const id = runnerIdValue.call(this, 'campaignId', 'Campaign ID', itemIndex);
		// Each is a state change that is the same when repeated, so a retry is harmless.
		const answer = await runnerAnswer(this, ROUTES[action], { id, body: {}, itemIndex });
		return { campaign_id: id, ...answer } as IDataObject;
	}
	return { description, execute };
}
