import { z } from 'zod/v4';

import { isoTimestamp, jsonObject, nonEmptyString, uuid } from './common';

const SEARCH_ITEM_OPERATIONS = ['created', 'updated', 'unchanged'] as const;

export const upsertSearchItemBody = z.object({
	collection_id: uuid(),
	external_id: nonEmptyString(),
	item: jsonObject(),
	embedding_json: jsonObject().optional(),
	active: z.boolean().optional(),
});

export const searchItemSchema = z.looseObject({
	id: nonEmptyString(),
	collection_id: nonEmptyString(),
	external_id: z.string(),
	source: z.string(),
	operation: z.enum(SEARCH_ITEM_OPERATIONS),
	is_active: z.boolean(),
	embedding_regenerated: z.boolean(),
	payload: z.record(z.string(), z.unknown()),
	embedding_json: z.record(z.string(), z.unknown()),
	created_at: isoTimestamp(),
	updated_at: isoTimestamp(),
});
export type SearchItem = z.infer<typeof searchItemSchema>;

export const listSearchItemsQuery = z.object({ collection_id: uuid() });

export const listSearchItemsResponse = z.looseObject({
	collection_id: z.string(),
	count: z.int(),
	items: z.array(z.looseObject({ external_id: z.string(), is_active: z.boolean() })),
});
