/** Search items (SPEC B1, B2): upsert keyed by business + collection + external_id. */
import type { FastifyInstance } from 'fastify';

import type { SandboxContext } from '../context';
import { newUuid } from '../ids';
import { sameJson } from '../merge';
import type { Collection, SearchItem } from '../model';
import { defineOperation } from './operation';
import { ownedByBusiness } from './ownership';

/** The embedding payload from the collection's configured fields (fields the item lacks are left out). */
function deriveEmbedding(collection: Collection, item: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const field of collection.embedding_fields) if (item[field] !== undefined) out[field] = item[field];
	return out;
}

export function searchRoutes(app: FastifyInstance, context: SandboxContext): void {
	const { store, clock } = context;

	defineOperation(app, context, 'upsertSearchItem', (business, { body }) => {
		const collection = ownedByBusiness(
			business,
			store.collections.get(body.collection_id),
			'collection',
			'collection_id',
			body.collection_id,
		);
		const items = store.items.get(collection.id) ?? new Map<string, SearchItem>();
		store.items.set(collection.id, items);
		const embedding = body.embedding_json ?? deriveEmbedding(collection, body.item);
		const active = body.active ?? true;
		const existing = items.get(body.external_id);
		const now = clock.iso();
		if (!existing) {
			const item: SearchItem = {
				id: newUuid(),
				collection_id: collection.id,
				external_id: body.external_id,
				payload: structuredClone(body.item),
				embedding_json: structuredClone(embedding),
				is_active: active,
				created_at: now,
				updated_at: now,
			};
			items.set(item.external_id, item);
			return { ...structuredClone(item), source: 'api', operation: 'created', embedding_regenerated: true };
		}
		const embeddingChanged = !sameJson(existing.embedding_json, embedding);
		const changed = embeddingChanged || existing.is_active !== active || !sameJson(existing.payload, body.item);
		if (changed) {
			existing.payload = structuredClone(body.item);
			existing.embedding_json = structuredClone(embedding);
			existing.is_active = active;
			existing.updated_at = now;
		}
		return {
			...structuredClone(existing),
			source: 'api',
			operation: changed ? 'updated' : 'unchanged',
			embedding_regenerated: embeddingChanged,
		};
	});

	defineOperation(app, context, 'listSearchItems', (business, { query }) => {
		const collection = ownedByBusiness(
			business,
			store.collections.get(query.collection_id),
			'collection',
			'collection_id',
			query.collection_id,
		);
		const items = Array.from(store.items.get(collection.id)?.values() ?? [], (item) => ({
			id: item.id,
			external_id: item.external_id,
			is_active: item.is_active,
			updated_at: item.updated_at,
		}));
		return { collection_id: collection.id, count: items.length, items };
	});
}
