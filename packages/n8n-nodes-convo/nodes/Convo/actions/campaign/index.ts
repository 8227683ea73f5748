import type { INodeProperties } from 'n8n-workflow';

import * as cancel from './cancel.operation';
import * as create from './create.operation';
import * as deleteCampaign from './delete.operation';
import * as get from './get.operation';
import * as getReport from './getReport.operation';
import * as pause from './pause.operation';
import * as resume from './resume.operation';

export { cancel, create, deleteCampaign as delete, get, getReport, pause, resume };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['campaign'] } },
		options: [
			{
				name: 'Cancel',
				value: 'cancel',
				action: 'Cancel a campaign',
				description: 'Stop a campaign for good: recipients not sent yet become cancelled',
			},
			{
				name: 'Create',
				value: 'create',
				action: 'Create a campaign',
				description:
					'Send a template to ALL input items as one campaign of the runner, at a safe rate, ' +
					'never twice to a recipient',
			},
			{
				name: 'Delete',
				value: 'delete',
				action: 'Delete a campaign',
				description:
					'Remove a completed, cancelled or failed campaign from the runner for good, with its recipients ' +
					'and report',
			},
			{
				name: 'Get',
				value: 'get',
				action: 'Get a campaign',
				description: 'State, counts per outcome, rate and ETA of a campaign',
			},
			{
				name: 'Get Report',
				value: 'getReport',
				action: 'Get the report of a campaign',
				description: 'One item per recipient: outcome, message ID, error, attempts',
			},
			{
				name: 'Pause',
				value: 'pause',
				action: 'Pause a campaign',
				description: 'Hold the sends of a campaign on every runner process',
			},
			{
				name: 'Resume',
				value: 'resume',
				action: 'Resume a campaign',
				description: 'Continue a paused campaign',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...getReport.description,
	...pause.description,
	...resume.description,
	...cancel.description,
	...deleteCampaign.description,
];
