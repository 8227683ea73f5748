import type { INodeProperties } from 'n8n-workflow';

import * as list from './list.operation';
import * as upsert from './upsert.operation';

export { list, upsert };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['searchItem'] } },
		options: [
			{
				name: 'List',
				value: 'list',
				action: 'List the items of a search collection',
				description: 'External ID and active state of every item of a search collection',
			},
			{
				name: 'Create or Update',
				value: 'upsert',
				action: 'Create or update a search item',
				description: 'Create a new record, or update the current one if it already exists (upsert)',
			},
		],
		default: 'upsert',
	},
	...upsert.description,
	...list.description,
];
