import { badCredentials, external, runConvo, shownError, useSandbox, fieldLabel } from './support';

describe('Convo node: Search Item', () => {
	const context = useSandbox();
	const collection = () => context.business.collections[0];

	it('upserts items from expressions, then updates and deactivates one', async () => {
		const items = [
			{ sku: 'test-sku-1', title: 'Blue shirt', price: 20 },
			{ sku: 'test-sku-2', title: 'Red shirt', price: 25 },
		];
		const upsert = {
			resource: 'searchItem',
			operation: 'upsert',
			collectionId: collection().id,
			externalId: '={{ $json.sku }}',
			item: '={{ JSON.stringify({ title: $json.title, price: $json.price }) }}',
		};
		const created = await runConvo(context, upsert, { items });
		expect(created.errorOf('Convo')).toBeUndefined();
		expect(created.json.map((item) => [item.external_id, item.operation, item.is_active])).toEqual([
			['test-sku-1', 'created', true],
			['test-sku-2', 'created', true],
		]);
		expect(created.json[0].payload).toEqual({ title: 'Blue shirt', price: 20 });

		const updated = await runConvo(context, { ...upsert, active: false }, { items: [{ ...items[0], price: 18 }] });
		expect(updated.json[0]).toMatchObject({
			external_id: 'test-sku-1',
			operation: 'updated',
			is_active: false,
			payload: { price: 18 },
		});

		const stored = await external<{ items: Array<{ external_id: string; is_active: boolean }> }>(
			context,
			'GET',
			`/search/items?collection_id=${collection().id}`,
		);
		expect(stored.body.items).toEqual(
			expect.arrayContaining([
				expect.objectContaining({ external_id: 'test-sku-1', is_active: false }),
				expect.objectContaining({ external_id: 'test-sku-2', is_active: true }),
			]),
		);
	});

	it('sends an explicit embedding JSON', async () => {
		// One the collection's configuration (title, description) would not derive from the item.
		const result = await runConvo(context, {
			resource: 'searchItem',
			operation: 'upsert',
			collectionId: collection().id,
			externalId: 'doc-1',
			item: '{"title":"Manual","body":"long text"}',
			additionalFields: { embeddingJson: '{"body":"long text"}' },
		});
		expect(result.json[0].embedding_json).toEqual({ body: 'long text' });
	});

	it('gets many items of a collection, one item each with its collection, up to Limit unless Return All', async () => {
		for (const externalId of ['a', 'b', 'c']) {
			await runConvo(context, {
				resource: 'searchItem',
				operation: 'upsert',
				collectionId: collection().id,
				externalId,
				item: '{"x":1}',
			});
		}
		const stored = await external<{ count: number }>(context, 'GET', `/search/items?collection_id=${collection().id}`);
		expect(stored.body.count).toBeGreaterThanOrEqual(3);

		const all = await runConvo(context, {
			resource: 'searchItem',
			operation: 'getAll',
			collectionId: collection().id,
			returnAll: true,
		});
		expect(all.errorOf('Convo')).toBeUndefined();
		expect(all.json).toHaveLength(stored.body.count);
		expect(all.json).toEqual(
			expect.arrayContaining([
				expect.objectContaining({ collection_id: collection().id, external_id: 'a', is_active: true }),
			]),
		);
		expect(all.json.every((item) => item.collection_id === collection().id)).toBe(true);

		const limited = await runConvo(context, {
			resource: 'searchItem',
			operation: 'getAll',
			collectionId: collection().id,
			limit: 2,
		});
		expect(limited.json).toEqual(all.json.slice(0, 2));
	});

	it('refuses an item that is not a JSON object before sending (400 rule)', async () => {
		const result = await runConvo(context, {
			resource: 'searchItem',
			operation: 'upsert',
			collectionId: collection().id,
			externalId: 'a',
			item: '[1, 2]',
		});
		expect(shownError(result)).toContain('Item must be a JSON object');
	});

	it('refuses a collection id that is not a UUID before sending (400 rule)', async () => {
		const result = await runConvo(context, {
			resource: 'searchItem',
			operation: 'upsert',
			collectionId: 'products',
			externalId: 'a',
			item: '{}',
		});
		expect(shownError(result)).toContain(`${fieldLabel('searchItem', 'upsert', 'collectionId')} must be a UUID`);
	});

	it('says a collection of another business is refused', async () => {
		const result = await runConvo(context, {
			resource: 'searchItem',
			operation: 'upsert',
			collectionId: context.other.collections[0].id,
			externalId: 'a',
			item: '{"x":1}',
		});
		expect(shownError(result)).toContain('This resource belongs to another business (403)');
		expect(shownError(result)).toContain('The service said: collection_id: the collection');
	});

	it('says which credential to check (401)', async () => {
		const result = await runConvo(
			context,
			{ resource: 'searchItem', operation: 'upsert', collectionId: collection().id, externalId: 'a', item: '{}' },
			{ credentials: badCredentials(context) },
		);
		expect(shownError(result)).toContain('Check the API key in the Convo External API credential');
	});
});
