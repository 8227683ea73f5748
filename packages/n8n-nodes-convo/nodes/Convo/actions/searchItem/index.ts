import type { INodeProperties } from 'n8n-workflow';

import * as getAll from './getAll.operation';
import * as upsert from './upsert.operation';

export { getAll, upsert };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['searchItem'] } },
		options: [
			{
				name: 'Create or Update',
				value: 'upsert',
				action: 'Create or update a search item',
				description: 'Create a new record, or update the current one if it already exists (upsert)',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many items of a search collection',
				description: 'External ID and active state of the items of a search collection',
			},
		],
		default: 'upsert',
	},
	...upsert.description,
	...getAll.description,
];
