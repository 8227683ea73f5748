import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { identifierValue, returnAllFields } from '../../descriptions/common.description';
import { collectionIdField } from './fields';

const properties: INodeProperties[] = [collectionIdField, ...returnAllFields];

export const description = updateDisplayOptions(
	{ show: { resource: ['searchItem'], operation: ['getAll'] } },
	properties,
);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = { collection_id: 'collectionId' };

const labelOf = fieldLabels({ description, apiFields });

/** One output item per search item (external_id, is_active), each with the collection it belongs to. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const collectionId = identifierValue.call(this, 'collectionId', itemIndex);
	const response = await convoRequest.call(
		this,
		OPERATIONS.listSearchItems,
		{ query: { collection_id: collectionId } },
		itemIndex,
		labelOf,
	);
	// The service answers with the whole list at once (SPEC B2 has no paging); Limit cuts it here.
	const items = ((response.items as IDataObject[]) ?? []).map((item) => ({
		collection_id: response.collection_id,
		...item,
	}));
	if (this.getNodeParameter('returnAll', itemIndex, false)) return items;
	return items.slice(0, this.getNodeParameter('limit', itemIndex, 50) as number);
}
