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
				description:
					'Send an approved template from a business number through the external API, ' +
					'with named or numbered variables and URL buttons ' +
					'(Message → Send sends templates through the messaging API)',
			},
		],
		default: 'send',
	},
	...send.description,
];
