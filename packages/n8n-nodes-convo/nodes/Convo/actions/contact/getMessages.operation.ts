import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { LIMITS, OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { simplifyField, unwrap } from '../../helpers/simplify';
import { identifierValue } from '../../descriptions/common.description';
import { contactUuidField } from './fields';

const properties: INodeProperties[] = [
	contactUuidField,
	{
		displayName: 'Message Limit',
		name: 'messageLimit',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: LIMITS.contactMessagesLimit.max },
		// Literal: n8n's lint reads the default statically. Equals LIMITS.contactMessagesLimit.default.
		default: 100,
		description:
			'How many of the most recent messages to return, newest first ' + `(at most ${LIMITS.contactMessagesLimit.max})`,
	},
	simplifyField('one item per message'),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['contact'], operation: ['getMessages'] } },
	properties,
);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = { uuid: 'contactUuid', limit: 'messageLimit' };

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject | IDataObject[]> {
	const uuid = identifierValue.call(this, 'contactUuid', itemIndex);
	const limit = this.getNodeParameter('messageLimit', itemIndex, LIMITS.contactMessagesLimit.default) as number;
	const response = await convoRequest.call(
		this,
		OPERATIONS.getContactMessages,
		{ params: { uuid }, query: { limit } },
		itemIndex,
		labelOf,
	);
	return this.getNodeParameter('simplify', itemIndex, true) ? unwrap(response, 'messages') : response;
}
