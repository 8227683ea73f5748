import type { INodeProperties } from 'n8n-workflow';

import * as send from './send.operation';

export { send };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['template'] } },
		options: [
			{
				name: 'Send',
				value: 'send',
				action: 'Send a template message',
				description: 'Send an approved template message to a phone number, with variables and URL button values',
			},
		],
		default: 'send',
	},
	...send.description,
];
