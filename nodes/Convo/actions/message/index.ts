import type { INodeProperties } from 'n8n-workflow';

import * as getStatus from './getStatus.operation';

export { getStatus };

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
		],
		default: 'getStatus',
	},
	...getStatus.description,
];
