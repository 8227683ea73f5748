import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';
import * as start from './start.operation';

export { get, start };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['reindexRun'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				action: 'Get a reindex run',
				description: 'State, counts, rate and ETA of a reindex run',
			},
			{
				name: 'Start',
				value: 'start',
				action: 'Start a reindex run',
				description: 'Ask the runner to sync a search collection with a feed, sending only what changed',
			},
		],
		default: 'start',
	},
	...start.description,
	...get.description,
];
