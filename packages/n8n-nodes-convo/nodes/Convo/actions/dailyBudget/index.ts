import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';
import * as set from './set.operation';

export { get, set };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['dailyBudget'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				action: 'Get the daily budget',
				description: 'The daily limit in force, the customers counted in the last 24 hours and how many are left',
			},
			{
				name: 'Set',
				value: 'set',
				action: 'Set the daily limit',
				description: 'How many distinct customers the business may message in a rolling 24 hours, or unlimited',
			},
		],
		default: 'get',
	},
	...get.description,
	...set.description,
];
