import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { jsonObjectParameter } from '../../helpers/json';
import { identifierValue } from '../../descriptions/common.description';
import { collectionIdField } from './fields';

const properties: INodeProperties[] = [
	collectionIdField,
	{
		displayName: 'External ID',
		name: 'externalId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. sku-1042',
		description: 'Your identifier of the item; an item with the same external ID in the collection is updated',
	},
	{
		displayName: 'Item',
		name: 'item',
		type: 'json',
		required: true,
		default: '{}',
		description: 'The item as a JSON object; it is stored as the payload of the search item',
	},
	{
		displayName: 'Active',
		name: 'active',
		type: 'boolean',
		default: true,
		description: 'Whether the item can be found; set to false to hide an item without deleting it',
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Optional settings of the upsert',
		options: [
			{
				displayName: 'Embedding JSON',
				name: 'embeddingJson',
				type: 'json',
				default: '{}',
				description: "JSON object used for the embedding instead of the collection's configured embedding fields",
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['searchItem'], operation: ['upsert'] } },
	properties,
);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	collection_id: 'collectionId',
	external_id: 'externalId',
	item: 'item',
	embedding_json: 'additionalFields.embeddingJson',
};

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const extra = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const body: IDataObject = {
		collection_id: identifierValue.call(this, 'collectionId', itemIndex),
		external_id: String(this.getNodeParameter('externalId', itemIndex)).trim(),
		item: jsonObjectParameter.call(this, this.getNodeParameter('item', itemIndex), 'Item', itemIndex) ?? {},
		active: this.getNodeParameter('active', itemIndex, true) as boolean,
	};
	if (extra.embeddingJson !== undefined) {
		const embedding = jsonObjectParameter.call(this, extra.embeddingJson, 'Embedding JSON', itemIndex);
		// The default "{}" means "not given": an empty object would override the collection configuration.
		if (embedding && Object.keys(embedding).length > 0) body.embedding_json = embedding;
	}
	return await convoRequest.call(this, OPERATIONS.upsertSearchItem, { body }, itemIndex, labelOf);
}
