import type { INodeProperties } from 'n8n-workflow';

import * as getStatus from './getStatus.operation';
import * as send from './send.operation';

export { getStatus, send };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['message'] } },
		options: [
			{
				name: 'Get Status',
				value: 'getStatus',
				action: 'Get the delivery status of a message',
				description: 'Current delivery state of a message sent through the API',
			},
			{
				name: 'Send',
				value: 'send',
				action: 'Send a message',
				description:
					'Send a text, media or template message through a connected channel (messaging API); ' +
					'for templates with named variables or URL buttons see Template → Send',
			},
		],
		default: 'send',
	},
	...send.description,
	...getStatus.description,
];
