import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { convoRequest } from '../../transport';
import { simplifyField } from '../simplify';
import { collectionIdField } from './fields';

const properties: INodeProperties[] = [collectionIdField, simplifyField('one item per search item (external_id, is_active)')];

export const description = updateDisplayOptions({ show: { resource: ['searchItem'], operation: ['list'] } }, properties);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = { collection_id: 'collectionId' };

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject | IDataObject[]> {
	const collectionId = (this.getNodeParameter('collectionId', itemIndex) as string).trim();
	const response = await convoRequest.call(this, OPERATIONS.listSearchItems, { query: { collection_id: collectionId } }, itemIndex);
	if (!this.getNodeParameter('simplify', itemIndex, true)) return response;
	return ((response.items as IDataObject[]) ?? []).map((item) => ({ collection_id: response.collection_id, ...item }));
}
