import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeApiError, NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { CAPTIONED_MESSAGE_TYPES, LIMITS, OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { jsonObjectParameter, type KeyValuePair, objectToPairs, pairsToObject } from '../../helpers/json';
import { phoneInternational } from '../../helpers/phone';
import { sentMessage, simplifyField } from '../../helpers/simplify';
import { drawOnBudget, drawOnBudgetField } from '../dailyBudget/draw';
import {
	identifierField,
	identifierValue,
	keyValueField,
	recipientPhoneField,
} from '../../descriptions/common.description';

/** The fix for free text or media refused outside the customer-care window (SPEC A2 rule 1). */
const OUTSIDE_CUSTOMER_CARE_WINDOW_FIX =
	'Free text and media reach a contact only within the 24-hour customer-care window after their last message. ' +
	'Outside it, send a template: Message Type "Template" here, or Template → Send (external API, ' +
	'with named variables and URL buttons).';

const properties: INodeProperties[] = [
	{
		displayName:
			'Free text and media reach a contact only within 24 hours of their last message ' +
			'(the customer-care window). Outside it, choose Message Type "Template", ' +
			'or use Template → Send for named variables and URL buttons.',
		name: 'customerCareWindowNotice',
		type: 'notice',
		default: '',
	},
	identifierField({
		displayName: 'Channel ID',
		name: 'channelUuid',
		description:
			'ID of the connected channel (the business number) the message is sent through, ' +
			'shown with the channel in the Convo dashboard',
	}),
	{
		displayName: 'Channel Type',
		name: 'channelType',
		type: 'string',
		required: true,
		default: 'whatsapp',
		description:
			'Kind of channel the message goes out on, e.g. whatsapp ' +
			'(sent to the service as "from"). Not a phone number: ' +
			'the business number is the one connected to the channel chosen above.',
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
				description:
					'An approved template message, required outside the 24-hour customer-care window; ' +
					'values fill {{1}}, {{2}}, ... in order. For named variables or URL buttons use Template → Send.',
			},
			{
				name: 'Text',
				value: 'text',
				description: 'Free text; only within 24 hours of the last message from the contact',
			},
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
		...identifierField({
			displayName: 'Template ID',
			name: 'templateUuid',
			description: 'ID of the approved template to send, shown with the template in the Convo dashboard',
		}),
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
				values: [
					{
						displayName: 'Value',
						name: 'value',
						type: 'string',
						default: '',
						description: 'Value of the next variable',
					},
				],
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
				description:
					`Custom key/value pairs stored with the message: at most ${LIMITS.metadataPairs} pairs, ` +
					`keys up to ${LIMITS.metadataKeyLength} characters, values up to ${LIMITS.metadataValueLength}`,
				entryName: 'pairs',
				entryDisplayName: 'Pair',
				keyDescription: 'Name of the metadata entry',
				valueDescription: 'Value of the metadata entry',
			}),
			{
				displayName: 'Metadata (JSON)',
				name: 'metadataJson',
				type: 'json',
				default: '{}',
				description:
					'Metadata as one JSON object of text values, e.g. {"order": "42"}, for AI agents and mapped data; ' +
					'combined with the Metadata pairs (a key in both is refused)',
			},
			identifierField({
				displayName: 'Team ID',
				name: 'teamUuid',
				description: 'ID of the team the conversation is assigned to, shown with the team in the Convo dashboard',
				required: false,
			}),
		],
	},
	drawOnBudgetField('message', 'To number'),
	simplifyField('the sent message: messageId and status, as Template → Send returns messageId'),
];

export const description = updateDisplayOptions({ show: { resource: ['message'], operation: ['send'] } }, properties);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	to: 'to',
	from: 'channelType',
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

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const type = this.getNodeParameter('messageType', itemIndex) as string;
	const extra = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const body: IDataObject = {
		to: phoneInternational.call(this, this.getNodeParameter('to', itemIndex), 'To', itemIndex),
		from: (this.getNodeParameter('channelType', itemIndex) as string).trim(),
		// A template message is a text message that carries a template
		// (docs/decisions/nodes/two-template-sends.md).
		type: type === 'template' ? 'text' : type,
		content: content.call(this, type, itemIndex),
		channel_uuid: identifierValue.call(this, 'channelUuid', itemIndex),
	};
	if (type === 'template') {
		body.template_uuid = identifierValue.call(this, 'templateUuid', itemIndex);
		body.optin_contact = this.getNodeParameter('optinContact', itemIndex, false) as boolean;
		const values = this.getNodeParameter('templateValues.values', itemIndex, []) as Array<{ value: unknown }>;
		if (values.length > 0) body.template_values = values.map((entry) => String(entry.value ?? ''));
	}
	if (extra.assignedUser) body.assigned_user = String(extra.assignedUser).trim();
	const teamUuid = identifierValue.call(this, 'additionalFields.teamUuid', itemIndex);
	if (teamUuid !== '') body.team_uuid = teamUuid;
	if (extra.botStatus) body.bot_status = extra.botStatus;
	const fields = extra.fields as string[] | undefined;
	if (fields && fields.length > 0) body.fields = fields.join(',');
	// Pairs typed in the form and JSON from an agent or mapped data; a key in both fails the item.
	const pairs = [
		...(((extra.metadata as IDataObject | undefined)?.pairs as KeyValuePair[] | undefined) ?? []),
		...objectToPairs(jsonObjectParameter.call(this, extra.metadataJson, 'Metadata (JSON)', itemIndex)),
	];
	if (pairs.length > 0) body.metadata = pairsToObject.call(this, pairs, 'Metadata', itemIndex);

	await drawOnBudget.call(this, itemIndex, String(body.to));
	let response: IDataObject;
	try {
		response = await convoRequest.call(this, OPERATIONS.sendMessage, { body }, itemIndex, labelOf);
	} catch (error) {
		const failure =
			error instanceof NodeApiError || error instanceof NodeOperationError
				? error
				: new NodeOperationError(this.getNode(), error as Error, { itemIndex });
		// The service's 400 says what it refused; for free text and media the likely cause is the customer-care window.
		if (type !== 'template' && failure instanceof NodeApiError && Number(failure.httpCode) === 400) {
			failure.description = `${failure.description ?? ''} ${OUTSIDE_CUSTOMER_CARE_WINDOW_FIX}`.trim();
		}
		throw failure;
	}
	if (!this.getNodeParameter('simplify', itemIndex, true)) return response;
	// The message itself, next to the contact/conversation objects asked for with "Include in Response".
	const { message, ...rest } = response;
	const { uuid, ...status } = (message ?? {}) as IDataObject;
	return sentMessage(uuid, { ...status, ...rest });
}
