import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { pairsToObject } from '../../helpers/json';
import { simplifyField, unwrapContact } from '../../helpers/simplify';
import { contactUuidField } from './fields';
import { identifierValue, keyValueField } from '../../descriptions/common.description';

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
					'Comma-separated tags (an expression may also give a list), ' +
					'used as Tags Mode says. Empty changes nothing; to remove every tag choose Tags Mode "Remove All".',
			},
			{
				displayName: 'Tags Mode',
				name: 'tagsMode',
				type: 'options',
				options: [
					{ name: 'Add', value: 'add', description: 'Keep the current tags and add the ones in Tags' },
					{ name: 'Remove', value: 'remove', description: 'Keep the current tags except the ones in Tags' },
					{ name: 'Remove All', value: 'removeAll', description: 'Remove every tag of the contact; Tags is ignored' },
					{ name: 'Replace', value: 'replace', description: 'The tags in Tags replace all current tags' },
				],
				default: 'replace',
				description:
					"How Tags changes the contact's tags. Add and Remove read the current tags first; " +
					'Replace without Tags added changes nothing.',
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

/** Tags from a comma-separated string or a list; blanks are dropped, so "" and " , " give none. */
function tagList(value: unknown): string[] {
	const list = Array.isArray(value) ? value : String(value ?? '').split(',');
	return list.map((tag) => String(tag).trim()).filter((tag) => tag !== '');
}

/**
 * A PATCH that changes nothing and returns the contact (SPEC B3: custom fields are merged, only the
 * keys sent change). Not `{}`: n8n sends no body at all for an empty object, and the service wants one.
 */
const UNCHANGING_UPDATE: IDataObject = { custom_fields: {} };

type TagsMode = 'replace' | 'add' | 'remove' | 'removeAll';

/**
 * The tags to send (B3 replaces the whole list), or undefined for "no change". Empty Tags never
 * clears the list: clearing is the explicit mode Remove All.
 */
async function tagsToSend(
	this: IExecuteFunctions,
	fields: IDataObject,
	uuid: string,
	itemIndex: number,
): Promise<string[] | undefined> {
	const mode = (fields.tagsMode ?? 'replace') as TagsMode;
	if (mode === 'removeAll') return [];
	const given = tagList(fields.tags);
	if (given.length === 0) return undefined;
	if (mode === 'replace') return given;
	const current = unwrapContact(
		await convoRequest.call(
			this,
			OPERATIONS.updateContact,
			{ params: { uuid }, body: UNCHANGING_UPDATE },
			itemIndex,
			labelOf,
		),
	);
	const currentTags = tagList(current.tags);
	if (mode === 'add') return [...new Set([...currentTags, ...given])];
	return currentTags.filter((tag) => !given.includes(tag));
}

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const uuid = identifierValue.call(this, 'contactUuid', itemIndex);
	const fields = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
	const body: IDataObject = {};
	if (fields.name !== undefined && String(fields.name).trim() !== '') body.name = String(fields.name).trim();
	const tags = await tagsToSend.call(this, fields, uuid, itemIndex);
	if (tags !== undefined) body.tags = tags;
	const customFields = (fields.customFields as IDataObject | undefined)?.field as
		| Array<{ key?: unknown; value?: unknown }>
		| undefined;
	if (customFields && customFields.length > 0)
		body.custom_fields = pairsToObject.call(this, customFields, 'Custom Fields', itemIndex);
	const assignment = this.getNodeParameter('assignment', itemIndex, 'keep') as string;
	if (assignment === 'assign') body.assigned_user = (this.getNodeParameter('assignedUser', itemIndex) as string).trim();
	if (assignment === 'unassign') body.unassign_user = true;

	const response = await convoRequest.call(
		this,
		OPERATIONS.updateContact,
		{ params: { uuid }, body: Object.keys(body).length > 0 ? body : UNCHANGING_UPDATE },
		itemIndex,
		labelOf,
	);
	return this.getNodeParameter('simplify', itemIndex, true) ? unwrapContact(response) : response;
}
