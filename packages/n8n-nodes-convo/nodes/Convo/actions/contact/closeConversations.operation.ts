import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { simplifyField, unwrapContact } from '../../helpers/simplify';
import { identifierValue } from '../../descriptions/common.description';
import { contactUuidField } from './fields';

const properties: INodeProperties[] = [contactUuidField, simplifyField('the contact itself, with closedAt set')];

export const description = updateDisplayOptions(
	{ show: { resource: ['contact'], operation: ['closeConversations'] } },
	properties,
);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = { uuid: 'contactUuid' };

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const uuid = identifierValue.call(this, 'contactUuid', itemIndex);
	const response = await convoRequest.call(
		this,
		OPERATIONS.closeContactConversations,
		{ params: { uuid } },
		itemIndex,
		labelOf,
	);
	return this.getNodeParameter('simplify', itemIndex, true) ? unwrapContact(response) : response;
}
