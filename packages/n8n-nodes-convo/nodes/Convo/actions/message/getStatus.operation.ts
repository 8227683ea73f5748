import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { identifierField, identifierValue } from '../../descriptions/common.description';
import { simplifyField, unwrap } from '../../helpers/simplify';

const properties: INodeProperties[] = [
	identifierField({
		displayName: 'Message ID',
		name: 'messageUuid',
		description: 'ID the service returned when the message was sent: messageId in the output of Message → Send',
	}),
	simplifyField('the message status object'),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['message'], operation: ['getStatus'] } },
	properties,
);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = { uuid: 'messageUuid' };

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const uuid = identifierValue.call(this, 'messageUuid', itemIndex);
	const response = await convoRequest.call(this, OPERATIONS.getMessageStatus, { params: { uuid } }, itemIndex, labelOf);
	return this.getNodeParameter('simplify', itemIndex, true) ? (unwrap(response, 'message') as IDataObject) : response;
}
