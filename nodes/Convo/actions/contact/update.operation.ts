import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { convoRequest } from '../../transport';
import { pairsToObject } from '../json';
import { simplifyField, unwrapContact } from '../simplify';
import { contactUuidField } from './fields';
import { keyValueField } from '../sharedFields';

const properties: INodeProperties[] = [
	contactUuidField,
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Only the fields added here change',
		options: [
			keyValueField({
				name: 'customFields',
				displayName: 'Custom Fields',
				placeholder: 'Add Custom Field',
				description: 'Custom fields to set; fields not listed here keep their values',
				entryName: 'field',
				entryDisplayName: 'Field',
				keyDescription: 'Key of the custom field',
				valueDescription: 'New value of the custom field',
			}),
			{
				displayName: 'Name',
				name: 'name',
				type: 'string',
				default: '',
				description: 'Full name of the contact; the service splits it into first and last name',
			},
			{
				displayName: 'Tags',
				name: 'tags',
				type: 'string',
				default: '',
				placeholder: 'e.g. vip, newsletter',
				description:
					'Comma-separated tags that REPLACE all current tags of the contact (an expression may also give a list). Leave empty to remove every tag.',
			},
		],
	},
	{
		displayName: 'Assigned User',
		name: 'assignment',
		type: 'options',
		options: [
			{ name: 'Keep as Is', value: 'keep', description: 'Do not change who is assigned' },
			{ name: 'Assign to User', value: 'assign', description: 'Make a business user responsible for the contact' },
			{ name: 'Unassign', value: 'unassign', description: 'Remove the assigned user' },
		],
		default: 'keep',
		description: 'Whether to change the business user responsible for the contact',
	},
	{
		displayName: 'User Email',
		name: 'assignedUser',
		type: 'string',
		placeholder: 'e.g. name@email.com',
		required: true,
		default: '',
		description: 'Email of the business user to assign',
		displayOptions: { show: { assignment: ['assign'] } },
	},
	simplifyField('the contact itself'),
];

export const description = updateDisplayOptions({ show: { resource: ['contact'], operation: ['update'] } }, properties);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	uuid: 'contactUuid',
	name: 'updateFields.name',
	tags: 'updateFields.tags',
	custom_fields: 'updateFields.customFields',
	assigned_user: 'assignedUser',
};

function tagList(value: unknown): string[] {
	const list = Array.isArray(value) ? value : String(value ?? '').split(',');
	return list.map((tag) => String(tag).trim()).filter((tag) => tag !== '');
}

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const uuid = (this.getNodeParameter('contactUuid', itemIndex) as string).trim();
	const fields = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
	const body: IDataObject = {};
	if (fields.name !== undefined && String(fields.name).trim() !== '') body.name = String(fields.name).trim();
	if (fields.tags !== undefined) body.tags = tagList(fields.tags);
	const customFields = (fields.customFields as IDataObject | undefined)?.field as Array<{ key?: unknown; value?: unknown }> | undefined;
	if (customFields && customFields.length > 0) body.custom_fields = pairsToObject(customFields);
	const assignment = this.getNodeParameter('assignment', itemIndex, 'keep') as string;
	if (assignment === 'assign') body.assigned_user = (this.getNodeParameter('assignedUser', itemIndex) as string).trim();
	if (assignment === 'unassign') body.unassign_user = true;

	const response = await convoRequest.call(this, OPERATIONS.updateContact, { params: { uuid }, body }, itemIndex);
	return this.getNodeParameter('simplify', itemIndex, true) ? unwrapContact(response) : response;
}
