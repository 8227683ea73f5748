import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { CAPTIONED_MESSAGE_TYPES, LIMITS, OPERATIONS } from '../../../shared';
import { convoRequest } from '../../transport';
import { pairsToObject } from '../json';
import { phoneInternational } from '../phone';
import { simplifyField } from '../simplify';
import { keyValueField, recipientPhoneField } from '../sharedFields';

const properties: INodeProperties[] = [
	{
		displayName: 'Channel UUID',
		name: 'channelUuid',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 6b1f0c52-2f4e-4d7a-9a51-0c1b2e3f4a5b',
		description: 'UUID of the connected channel the message is sent through',
	},
	{
		displayName: 'From',
		name: 'from',
		type: 'string',
		required: true,
		default: 'whatsapp',
		description: 'Channel identifier of the sender, e.g. whatsapp',
	},
	recipientPhoneField('to', 'To'),
	{
		displayName: 'Message Type',
		name: 'messageType',
		type: 'options',
		options: [
			{ name: 'Audio', value: 'audio', description: 'An audio file by URL (no caption)' },
			{ name: 'Document', value: 'document', description: 'A document by URL, with optional caption and file name' },
			{ name: 'Image', value: 'image', description: 'An image by URL, with optional caption' },
			{
				name: 'Template',
				value: 'template',
				description: 'An approved template message; required outside the 24-hour customer-care window',
			},
			{ name: 'Text', value: 'text', description: 'Free text; only within 24 hours of the last message from the contact' },
			{ name: 'Video', value: 'video', description: 'A video by URL, with optional caption' },
		],
		default: 'text',
		description: 'Kind of message to send',
	},
	{
		displayName: 'Text',
		name: 'text',
		type: 'string',
		typeOptions: { rows: 4 },
		required: true,
		default: '',
		description: 'Text of the message',
		displayOptions: { show: { messageType: ['text'] } },
	},
	{
		displayName: 'Media URL',
		name: 'mediaUrl',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. https://example.com/invoice.pdf',
		description: 'Public http(s) address of the file to send',
		displayOptions: { show: { messageType: ['image', 'document', 'audio', 'video'] } },
	},
	{
		displayName: 'Caption',
		name: 'caption',
		type: 'string',
		default: '',
		description: 'Text shown with the file; leave empty for none',
		displayOptions: { show: { messageType: CAPTIONED_MESSAGE_TYPES as string[] } },
	},
	{
		displayName: 'File Name',
		name: 'filename',
		type: 'string',
		default: '',
		placeholder: 'e.g. invoice.pdf',
		description: 'Name the recipient sees for the document; leave empty to use the one in the URL',
		displayOptions: { show: { messageType: ['document'] } },
	},
	{
		displayName: 'Template UUID',
		name: 'templateUuid',
		type: 'string',
		required: true,
		default: '',
		description: 'Identifier of the approved template message to send',
		displayOptions: { show: { messageType: ['template'] } },
	},
	{
		displayName: 'Opt-In Contact',
		name: 'optinContact',
		type: 'boolean',
		default: false,
		description: 'Whether the contact has opted in to receive template messages',
		displayOptions: { show: { messageType: ['template'] } },
	},
	{
		displayName: 'Template Values',
		name: 'templateValues',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: 'Add Value',
		default: {},
		description: 'Values for the template variables, in order: the first fills {{1}}, the second {{2}}, and so on',
		displayOptions: { show: { messageType: ['template'] } },
		options: [
			{
				displayName: 'Value',
				name: 'values',
				values: [{ displayName: 'Value', name: 'value', type: 'string', default: '', description: 'Value of the next variable' }],
			},
		],
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Optional settings of the send: assignment, bot status, extra response objects, metadata',
		options: [
			{
				displayName: 'Assigned User',
				name: 'assignedUser',
				type: 'string',
				placeholder: 'e.g. name@email.com',
				default: '',
				description: 'Email of the business user responsible for the conversation',
			},
			{
				displayName: 'Bot Status',
				name: 'botStatus',
				type: 'options',
				options: [
					{ name: 'Start Bot', value: 'bot_start' },
					{ name: 'End Bot', value: 'bot_end' },
				],
				default: 'bot_start',
				description: 'Whether the bot takes over the conversation or stops',
			},
			{
				displayName: 'Include in Response',
				name: 'fields',
				type: 'multiOptions',
				options: [
					{ name: 'Contact', value: 'contact' },
					{ name: 'Conversation', value: 'conversation' },
				],
				default: [],
				description: 'Extra objects the service adds to the response',
			},
			keyValueField({
				name: 'metadata',
				displayName: 'Metadata',
				placeholder: 'Add Metadata',
				description: `Custom key/value pairs stored with the message: at most ${LIMITS.metadataPairs} pairs, keys up to ${LIMITS.metadataKeyLength} characters, values up to ${LIMITS.metadataValueLength}`,
				entryName: 'pairs',
				entryDisplayName: 'Pair',
				keyDescription: 'Name of the metadata entry',
				valueDescription: 'Value of the metadata entry',
			}),
			{
				displayName: 'Team UUID',
				name: 'teamUuid',
				type: 'string',
				default: '',
				description: 'UUID of the team the conversation is assigned to',
			},
		],
	},
	simplifyField('the sent message (uuid and status)'),
];

export const description = updateDisplayOptions({ show: { resource: ['message'], operation: ['send'] } }, properties);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	to: 'to',
	from: 'from',
	channel_uuid: 'channelUuid',
	'content.text': 'text',
	'content.url': 'mediaUrl',
	'content.caption': 'caption',
	'content.filename': 'filename',
	template_uuid: 'templateUuid',
	template_values: 'templateValues',
	assigned_user: 'additionalFields.assignedUser',
	team_uuid: 'additionalFields.teamUuid',
	bot_status: 'additionalFields.botStatus',
	metadata: 'additionalFields.metadata',
};

function content(this: IExecuteFunctions, type: string, itemIndex: number): IDataObject {
	if (type === 'template') return { text: '' };
	if (type === 'text') return { text: this.getNodeParameter('text', itemIndex) as string };
	const media: IDataObject = { url: (this.getNodeParameter('mediaUrl', itemIndex) as string).trim() };
	if ((CAPTIONED_MESSAGE_TYPES as string[]).includes(type)) {
		const caption = this.getNodeParameter('caption', itemIndex, '') as string;
		if (caption !== '') media.caption = caption;
	}
	if (type === 'document') {
		const filename = this.getNodeParameter('filename', itemIndex, '') as string;
		if (filename !== '') media.filename = filename;
	}
	return media;
}

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const type = this.getNodeParameter('messageType', itemIndex) as string;
	const extra = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const body: IDataObject = {
		to: phoneInternational.call(this, this.getNodeParameter('to', itemIndex), 'To', itemIndex),
		from: (this.getNodeParameter('from', itemIndex) as string).trim(),
		// A template message is a text message that carries a template (docs/decisions.md).
		type: type === 'template' ? 'text' : type,
		content: content.call(this, type, itemIndex),
		channel_uuid: (this.getNodeParameter('channelUuid', itemIndex) as string).trim(),
	};
	if (type === 'template') {
		body.template_uuid = (this.getNodeParameter('templateUuid', itemIndex) as string).trim();
		body.optin_contact = this.getNodeParameter('optinContact', itemIndex, false) as boolean;
		const values = this.getNodeParameter('templateValues.values', itemIndex, []) as Array<{ value: unknown }>;
		if (values.length > 0) body.template_values = values.map((entry) => String(entry.value ?? ''));
	}
	if (extra.assignedUser) body.assigned_user = String(extra.assignedUser).trim();
	if (extra.teamUuid) body.team_uuid = String(extra.teamUuid).trim();
	if (extra.botStatus) body.bot_status = extra.botStatus;
	const fields = extra.fields as string[] | undefined;
	if (fields && fields.length > 0) body.fields = fields.join(',');
	const pairs = (extra.metadata as IDataObject | undefined)?.pairs as Array<{ key?: unknown; value?: unknown }> | undefined;
	if (pairs && pairs.length > 0) body.metadata = metadataObject.call(this, pairs, itemIndex);

	const response = await convoRequest.call(this, OPERATIONS.sendMessage, { body }, itemIndex);
	if (!this.getNodeParameter('simplify', itemIndex, true)) return response;
	// The message itself, next to the contact/conversation objects asked for with "Include in Response".
	const { message, ...rest } = response;
	return { ...(message as IDataObject), ...rest };
}

/** A key typed twice would silently lose a value, so it fails the item instead. */
function metadataObject(this: IExecuteFunctions, pairs: Array<{ key?: unknown; value?: unknown }>, itemIndex: number) {
	const seen = new Set<string>();
	for (const pair of pairs) {
		const key = String(pair.key ?? '').trim();
		if (seen.has(key)) {
			throw new NodeOperationError(this.getNode(), `metadata key "${key}" is given twice`, {
				itemIndex,
				description: 'Nothing was sent. Give each metadata key once.',
			});
		}
		seen.add(key);
	}
	return pairsToObject(pairs);
}
