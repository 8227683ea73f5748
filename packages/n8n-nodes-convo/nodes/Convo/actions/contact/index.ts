import type { INodeProperties } from 'n8n-workflow';

import * as closeConversations from './closeConversations.operation';
import * as getMessages from './getMessages.operation';
import * as reopenConversations from './reopenConversations.operation';
import * as update from './update.operation';

export { closeConversations, getMessages, reopenConversations, update };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['contact'] } },
		options: [
			{
				name: 'Close Conversations',
				value: 'closeConversations',
				action: 'Close the conversations of a contact',
				description: 'Close (archive) all conversations of a contact',
			},
			{
				name: 'Get Messages',
				value: 'getMessages',
				action: 'Get the messages of a contact',
				description: 'Most recent messages with a contact across all its conversations, newest first',
			},
			{
				name: 'Reopen Conversations',
				value: 'reopenConversations',
				action: 'Reopen the conversations of a contact',
				description: 'Reopen (unarchive) all conversations of a contact',
			},
			{
				name: 'Update',
				value: 'update',
				action: 'Update a contact',
				description: 'Change the name, replace, add or remove tags, merge custom fields, or assign or unassign a user',
			},
		],
		default: 'update',
	},
	...update.description,
	...getMessages.description,
	...closeConversations.description,
	...reopenConversations.description,
];
