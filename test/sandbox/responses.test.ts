import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';

import { buildApp } from '../../sandbox/src/app';
import { createSandboxContext } from '../../sandbox/src';
import type { SandboxContext } from '../../sandbox/src/context';
import { describeFixture } from '../../sandbox/src/fixture';
import { errorBodySchema } from './support';

/**
 * The sandbox checks each 2xx answer against the contract's response schema. These tests corrupt
 * a stored record (no handler is replaced) so the real route builds a drifting answer, and expect
 * the 500 that names the operation and the field.
 */
describe('sandbox: answers are checked against the contract response schemas', () => {
	let context: SandboxContext;
	let app: FastifyInstance;
	const business = describeFixture('', '').businesses[0];
	const headers = { 'x-api-key': business.apiKey, 'content-type': 'application/json' };

	let baseUrl: string;
	const request = async (method: string, path: string, body?: string) => {
		const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
		return { statusCode: response.status, json: async () => (await response.json()) as unknown };
	};

	beforeEach(async () => {
		context = createSandboxContext();
		app = buildApp(context);
		await app.listen({ port: 0, host: '127.0.0.1' });
		baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
	});
	afterEach(async () => {
		await app.close();
	});

	it('a contact whose name is not a string makes B3 answer 500 naming updateContact and contact[0].name', async () => {
		const contact = context.store.contacts.get(business.contacts[0].uuid)!;
		(contact as unknown as { name: unknown }).name = 42;
		const answer = await request('PATCH', `/api/external/v2/contacts/${contact.uuid}`, '{}');
		expect(answer.statusCode).toBe(500);
		const body = errorBodySchema.parse(await answer.json());
		expect(body.message).toContain('updateContact (SPEC B3, PATCH /api/external/v2/contacts/:uuid)');
		expect(body.message).toContain('contact[0].name must be a string, not a number');
		expect(body.field).toBe('contact[0].name');
	});

	it('a search item whose is_active is not a boolean makes B2 answer 500 naming listSearchItems and the item', async () => {
		const collection = business.collections[0].id;
		const [item] = context.store.items.get(collection)!.values();
		(item as unknown as { is_active: unknown }).is_active = 'yes';
		const answer = await request('GET', `/api/external/v2/search/items?collection_id=${collection}`);
		expect(answer.statusCode).toBe(500);
		const body = errorBodySchema.parse(await answer.json());
		expect(body.message).toContain('listSearchItems (SPEC B2');
		expect(body.message).toContain('items[0].is_active must be a boolean, not a string');
	});

	it('the same requests on intact records answer 200', async () => {
		const contact = business.contacts[0];
		expect((await request('PATCH', `/api/external/v2/contacts/${contact.uuid}`, '{}')).statusCode).toBe(200);
		const list = await request('GET', `/api/external/v2/search/items?collection_id=${business.collections[0].id}`);
		expect(list.statusCode).toBe(200);
	});
});
