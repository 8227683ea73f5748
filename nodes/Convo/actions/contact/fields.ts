import type { INodeProperties } from 'n8n-workflow';

export const contactUuidField: INodeProperties = {
	displayName: 'Contact ID',
	name: 'contactUuid',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. 9b2d6e0a-4c1f-4e8b-a3d2-5f7c1e9b0a64',
	description: 'UUID of the contact (contact.uuid in the Convo Trigger output or a conversation lookup)',
};
