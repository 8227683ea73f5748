import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as get from './get.operation';
import * as update from './update.operation';

export { create, get, update };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['agent'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				action: 'Create an agent',
				description: 'Create an AI agent of type BASIC with a name, a system prompt and tools',
			},
			{
				name: 'Get',
				value: 'get',
				action: 'Get an agent',
				description: 'Full configuration of an AI agent',
			},
			{
				name: 'Update',
				value: 'update',
				action: 'Update an agent',
				description: 'Change the name or prompt of an AI agent and merge its prompt config, tools and rules',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...update.description,
];
