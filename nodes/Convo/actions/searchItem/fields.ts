import type { INodeProperties } from 'n8n-workflow';

export const collectionIdField: INodeProperties = {
	displayName: 'Collection ID',
	name: 'collectionId',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. 1c9e4b7a-3d2f-4a8e-9b6c-0d5e7f1a2b3c',
	description: 'UUID of the search collection',
};
