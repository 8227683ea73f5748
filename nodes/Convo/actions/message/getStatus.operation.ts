import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { convoRequest } from '../../transport';
import { simplifyField, unwrap } from '../simplify';

const properties: INodeProperties[] = [
	{
		displayName: 'Message UUID',
		name: 'messageUuid',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 3f1c2b9e-...',
		description: 'Identifier the service returned when the message was sent (uuid of Message > Send)',
	},
	simplifyField('the message status object'),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['message'], operation: ['getStatus'] } },
	properties,
);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = { uuid: 'messageUuid' };

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const uuid = this.getNodeParameter('messageUuid', itemIndex) as string;
	const response = await convoRequest.call(this, OPERATIONS.getMessageStatus, { params: { uuid: uuid.trim() } }, itemIndex);
	return this.getNodeParameter('simplify', itemIndex, true) ? (unwrap(response, 'message') as IDataObject) : response;
}
