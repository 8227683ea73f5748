import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { LIMITS, OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { phoneDigits } from '../../helpers/phone';

const properties: INodeProperties[] = [
	{
		displayName: 'Look Up By',
		name: 'lookupBy',
		type: 'options',
		options: [
			{ name: 'Phone Number', value: 'phone', description: 'The phone number of the contact' },
			{ name: 'Contact Field', value: 'field', description: 'The value of one contact field' },
			{
				name: 'Phone Number and Contact Field',
				value: 'both',
				description: 'Both must match; use it when a field value alone matches several contacts',
			},
		],
		default: 'phone',
		description: 'How to find the contact whose conversation is returned',
	},
	{
		displayName: 'Phone Number',
		name: 'phone',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. +49 151 12345678',
		description: 'Phone number of the contact with country code; spaces, dashes and a leading + are fine',
		displayOptions: { show: { lookupBy: ['phone', 'both'] } },
	},
	{
		displayName: 'Field Key',
		name: 'fieldKey',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. customer_id',
		description: 'Key of a contact field definition',
		displayOptions: { show: { lookupBy: ['field', 'both'] } },
	},
	{
		displayName: 'Field Value',
		name: 'fieldValue',
		type: 'string',
		required: true,
		default: '',
		description: 'Value the contact field must have',
		displayOptions: { show: { lookupBy: ['field', 'both'] } },
	},
	{
		displayName: 'Message Limit',
		name: 'messageLimit',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: LIMITS.conversationMessageLimit.max },
		// Literal: n8n's lint reads the default statically. Equals LIMITS.conversationMessageLimit.default.
		default: 50,
		description: `How many messages of the conversation to include (at most ${LIMITS.conversationMessageLimit.max})`,
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['conversation'], operation: ['get'] } },
	properties,
);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	phone: 'phone',
	field_key: 'fieldKey',
	field_value: 'fieldValue',
	message_limit: 'messageLimit',
};

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const lookupBy = this.getNodeParameter('lookupBy', itemIndex) as string;
	const query: IDataObject = {
		message_limit: this.getNodeParameter('messageLimit', itemIndex, LIMITS.conversationMessageLimit.default) as number,
	};
	if (lookupBy !== 'field') {
		query.phone = phoneDigits.call(this, this.getNodeParameter('phone', itemIndex), 'Phone Number', itemIndex);
	}
	if (lookupBy !== 'phone') {
		query.field_key = String(this.getNodeParameter('fieldKey', itemIndex)).trim();
		query.field_value = String(this.getNodeParameter('fieldValue', itemIndex));
	}
	return await convoRequest.call(this, OPERATIONS.getConversation, { query }, itemIndex, labelOf);
}
