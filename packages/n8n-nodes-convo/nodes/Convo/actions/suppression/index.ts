import type { INodeProperties } from 'n8n-workflow';

import * as add from './add.operation';
import * as check from './check.operation';
import * as getAll from './getAll.operation';
import * as remove from './remove.operation';

export { add, check, getAll, remove };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['suppression'] } },
		options: [
			{
				name: 'Add',
				value: 'add',
				action: 'Add a phone to the suppression list',
				description: 'Put a phone on the list: no marketing campaign of the runner sends to it',
			},
			{
				name: 'Check',
				value: 'check',
				action: 'Check a phone against the suppression list',
				description: 'Whether a phone is on the list, with its reason, source and time',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many suppressed phones',
				description: 'The entries of the list, newest first',
			},
			{
				name: 'Remove',
				value: 'remove',
				action: 'Remove a phone from the suppression list',
				description: 'Take a phone off the list: campaigns send to it again',
			},
		],
		default: 'check',
	},
	...add.description,
	...check.description,
	...getAll.description,
	...remove.description,
];
