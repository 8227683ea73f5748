import { admin, call, contactOf, digits, expectErrorBody, UNKNOWN_UUID, useSandbox } from './support';

describe('sandbox: search items, templates and agents (SPEC B1, B2, B8 to B11)', () => {
	const context = useSandbox();

	describe('B1 POST /search/item, B2 GET /search/items (SPEC 3: upsert)', () => {
		const collection = () => context.business.collections[0];
		const upsert = (body: Record<string, unknown>, as = context.business) =>
			call(context, 'upsertSearchItem', {
				body: { collection_id: collection().id, external_id: 'sku-9', ...body },
				as,
			});

		it('reports created, unchanged, updated; is_active follows active (default true); embedding from embedding_fields', async () => {
			const created = await upsert({ item: { title: 'Espresso', description: 'Dark', price: 3 } });
			expect(created.status).toBe(200);
			expect(created.body).toMatchObject({
				collection_id: collection().id,
				external_id: 'sku-9',
				source: 'api',
				operation: 'created',
				is_active: true,
				embedding_regenerated: true,
				payload: { title: 'Espresso', description: 'Dark', price: 3 },
				embedding_json: { title: 'Espresso', description: 'Dark' },
			});
			expect(Object.keys(created.body.embedding_json).sort()).toEqual([...collection().embedding_fields].sort());
			const same = await upsert({ item: { title: 'Espresso', description: 'Dark', price: 3 } });
			expect(same.body).toMatchObject({
				id: created.body.id,
				operation: 'unchanged',
				embedding_regenerated: false,
				updated_at: created.body.updated_at,
			});
			const price = await upsert({ item: { title: 'Espresso', description: 'Dark', price: 4 } });
			expect(price.body).toMatchObject({
				id: created.body.id,
				operation: 'updated',
				embedding_regenerated: false,
				created_at: created.body.created_at,
			});
			const inactive = await upsert({ item: { title: 'Espresso', description: 'Dark', price: 4 }, active: false });
			expect(inactive.body).toMatchObject({ operation: 'updated', is_active: false });
			const explicit = await upsert({ item: { title: 'Espresso' }, embedding_json: { text: 'espresso dark roast' } });
			expect(explicit.body).toMatchObject({
				operation: 'updated',
				is_active: true,
				embedding_regenerated: true,
				embedding_json: { text: 'espresso dark roast' },
			});

			const list = await call(context, 'listSearchItems', { query: { collection_id: collection().id } });
			expect(list.body.collection_id).toBe(collection().id);
			expect(list.body.count).toBe(list.body.items.length);
			expect(list.body.items).toEqual(
				expect.arrayContaining([expect.objectContaining({ external_id: 'sku-9', is_active: true })]),
			);
		});

		it('GET /__sandbox/search-items shows each item as stored: payload, embedding, active; an unknown collection is 404', async () => {
			await upsert({ external_id: 'sku-20', item: { title: 'Tea', description: 'Green', price: 2 } });
			await upsert({
				external_id: 'sku-21',
				item: { title: 'Mate' },
				embedding_json: { text: 'mate' },
				active: false,
			});
			const stored = await admin<Array<Record<string, unknown>>>(
				context,
				'GET',
				`search-items?collection_id=${collection().id}`,
			);
			expect(stored.filter((item) => ['sku-20', 'sku-21'].includes(item.external_id as string))).toEqual([
				{
					external_id: 'sku-20',
					payload: { title: 'Tea', description: 'Green', price: 2 },
					embedding_json: { title: 'Tea', description: 'Green' },
					is_active: true,
				},
				{ external_id: 'sku-21', payload: { title: 'Mate' }, embedding_json: { text: 'mate' }, is_active: false },
			]);
			const unknown = await fetch(`${context.sandbox.baseUrl}/__sandbox/search-items?collection_id=${UNKNOWN_UUID}`);
			expect(unknown.status).toBe(404);
		});

		it('keeps businesses apart: another business collection is 403, an unknown one 404', async () => {
			expectErrorBody(await upsert({ item: {} }, context.other), 403);
			expectErrorBody(
				await call(context, 'listSearchItems', { query: { collection_id: collection().id }, as: context.other }),
				403,
			);
			expectErrorBody(await call(context, 'listSearchItems', { query: { collection_id: UNKNOWN_UUID } }), 404);
		});

		it('refuses missing and mistyped fields with 400 naming them', async () => {
			for (const [body, field] of [
				[{ collection_id: undefined, item: {} }, 'collection_id'],
				[{ external_id: undefined, item: {} }, 'external_id'],
				[{}, 'item'],
				[{ item: [] }, 'item'],
				[{ item: {}, active: 'no' }, 'active'],
				[{ item: {}, embedding_json: 'text' }, 'embedding_json'],
			] as const) {
				const answer = await upsert(body);
				expect(answer.status).toBe(400);
				expect(answer.body.field).toBe(field);
			}
			expectErrorBody(await call(context, 'listSearchItems', {}), 400);
		});
	});

	describe('B8 POST /send-template', () => {
		const template = (kind: string, business = context.business) => business.templates.find((t) => t.kind === kind)!;
		const sendTemplate = (templateId: string, body: Record<string, unknown>, extra: Record<string, string> = {}) =>
			call(context, 'sendTemplate', {
				query: { template_id: templateId, from_phone_number: context.business.phoneNumbers[0], ...extra },
				body: { phone: digits(contactOf(context.business, { inWindow: false }).phoneNumber), ...body },
			});
		const logged = async () => (await admin(context, 'GET', `messages?business=${context.business.id}`)).at(-1);

		it('fills positional variables by numeric keys and ignores body fields that match none', async () => {
			const positional = template('positional');
			const answer = await sendTemplate(positional.id, { 1: 'Grace', 2: 'A-9', coupon: 'ignored' });
			expect(answer.status).toBe(200);
			expect(answer.body).toEqual({
				success: true,
				message_id: expect.any(String),
				recipient: digits(contactOf(context.business, { inWindow: false }).phoneNumber),
				template_name: positional.name,
			});
			expect(await logged()).toMatchObject({
				uuid: answer.body.message_id,
				text: 'Hello Grace, your order A-9 has shipped.',
				template: { variables: { 1: 'Grace', 2: 'A-9' } },
			});
			const missing = await sendTemplate(positional.id, { 1: 'Grace' });
			expect(missing.status).toBe(400);
			expect(missing.body.field).toBe('2');
		});

		it('fills named variables by their names', async () => {
			const named = template('named');
			const answer = await sendTemplate(named.id, { first_name: 'Grace', order_id: 77 });
			expect(answer.status).toBe(200);
			expect((await logged()).text).toBe('Hi Grace, thanks for your order 77.');
		});

		it('replaces the URL button placeholder with the button text; refuses a URL as a body variable (400)', async () => {
			const button = template('urlButton');
			const answer = await sendTemplate(button.id, { buttons: [{ index: 0, sub_type: 'url', text: 'PKG-42' }] });
			expect(answer.status).toBe(200);
			expect((await logged()).template.buttons).toEqual([
				{ index: 0, url: button.buttons[0].url.replace('{{1}}', 'PKG-42') },
			]);
			const asVariable = await sendTemplate(button.id, {
				1: 'https://track.example.com/p/PKG-42',
				buttons: [{ index: 0, sub_type: 'url', text: 'x' }],
			});
			expect(asVariable.status).toBe(400);
			expect(asVariable.body.field).toBe('1');
			expect((await sendTemplate(button.id, {})).status).toBe(400);
			expect((await sendTemplate(button.id, { buttons: [{ index: 3, sub_type: 'url', text: 'x' }] })).status).toBe(400);
			expect(
				(await sendTemplate(button.id, { buttons: [{ index: 'first', sub_type: 'url', text: 'x' }] })).body.field,
			).toBe('buttons[0].index');
		});

		it('403 for another business template, sending number or agent; 404 for an unknown template', async () => {
			const positional = template('positional');
			const vars = { 1: 'a', 2: 'b' };
			expectErrorBody(await sendTemplate(template('positional', context.other).id, vars), 403);
			expectErrorBody(
				await sendTemplate(positional.id, vars, { from_phone_number: context.other.phoneNumbers[0] }),
				403,
			);
			expectErrorBody(await sendTemplate(positional.id, vars, { agent_id: context.other.agents[0].id }), 403);
			expectErrorBody(await sendTemplate(UNKNOWN_UUID, vars), 404);
			expect((await sendTemplate(positional.id, vars, { agent_id: context.business.agents[0].id })).status).toBe(200);
			expect(await admin(context, 'GET', `messages?business=${context.business.id}`)).toHaveLength(1);
		});

		it('refuses bad query and body fields with 400 naming them', async () => {
			const positional = template('positional');
			expect((await sendTemplate(positional.id, { phone: '+4915112340001' })).body.field).toBe('phone');
			expect((await sendTemplate('nope', {})).body.field).toBe('template_id');
			expect((await sendTemplate(positional.id, { 1: 'a', 2: 'b' }, { from_phone_number: '+49 30' })).body.field).toBe(
				'from_phone_number',
			);
			expect((await sendTemplate(positional.id, { 1: { nested: true }, 2: 'b' })).body.field).toBe('1');
		});
	});

	describe('B9 to B11 agents', () => {
		const agentId = () => context.business.agents[0].id;

		it('B9 creates a BASIC agent in the key business, ignoring a sent business_id and tool descriptions', async () => {
			const answer = await call(context, 'createAgent', {
				body: {
					business_id: context.other.id,
					agent: {
						name: 'Night shift',
						system_prompt: 'Answer briefly',
						tools: { handoff_to_human_control: { enabled: true, instructions: 'x', description: 'mine' } },
					},
				},
			});
			expect(answer.status).toBe(200);
			expect(answer.body.business_id).toBe(context.business.id);
			expect(answer.body.agent).toMatchObject({
				id: expect.any(String),
				name: 'Night shift',
				type: 'BASIC',
				system_prompt: 'Answer briefly',
			});
			expect(answer.body.agent.tools.handoff_to_human_control.description).not.toBe('mine');
			const read = await call(context, 'getAgent', { params: { agent_id: answer.body.agent.id } });
			expect(read.body.agent).toMatchObject({ type: 'BASIC', model: expect.any(String) });
			expectErrorBody(
				await call(context, 'getAgent', { params: { agent_id: answer.body.agent.id }, as: context.other }),
				403,
			);
			for (const body of [
				{},
				{ agent: { name: 'x' } },
				{ agent: { system_prompt: 'x' } },
				{ agent: { name: 1, system_prompt: 'x' } },
			]) {
				expectErrorBody(await call(context, 'createAgent', { body }), 400);
			}
		});

		it('B10 returns the full agent; 403 for another business agent, 404 unknown, 400 not a UUID', async () => {
			const answer = await call(context, 'getAgent', { params: { agent_id: agentId() } });
			expect(answer.status).toBe(200);
			expect(answer.body.business_id).toBe(context.business.id);
			expect(answer.body.agent).toMatchObject({
				id: agentId(),
				name: context.business.agents[0].name,
				type: 'BASIC',
				prompt_config: expect.any(Object),
				tools: {
					handoff_to_human_control: {
						enabled: true,
						instructions: expect.any(String),
						description: expect.any(String),
					},
				},
				data: expect.any(Object),
				activation_rules: expect.any(Object),
				follow_up_settings: expect.any(Object),
				inactivity_run_settings: expect.any(Object),
			});
			expectErrorBody(await call(context, 'getAgent', { params: { agent_id: context.other.agents[0].id } }), 403);
			expectErrorBody(await call(context, 'getAgent', { params: { agent_id: UNKNOWN_UUID } }), 404);
			expectErrorBody(await call(context, 'getAgent', { params: { agent_id: 'agent-1' } }), 400);
		});

		it.each(['updateAgent', 'updateAgentPut'] as const)(
			'B11 %s merges partially, drops nulls, ignores generated tool descriptions',
			async (key) => {
				const before = (await call(context, 'getAgent', { params: { agent_id: agentId() } })).body.agent;
				const answer = await call(context, key, {
					params: { agent_id: agentId() },
					body: {
						agent: {
							name: null,
							prompt_config: { language: 'de', tone_prompt: null },
							tools: { handoff_to_human_control: { enabled: false, description: 'edited by me' } },
							activation_rules: { keywords: ['help'] },
							data: null,
						},
					},
				});
				expect(answer.status).toBe(200);
				const after = answer.body.agent;
				expect(after.name).toBe(before.name);
				expect(after.prompt_config).toEqual({ ...before.prompt_config, language: 'de' });
				expect(after.tools.handoff_to_human_control).toEqual({
					...before.tools.handoff_to_human_control,
					enabled: false,
				});
				expect(after.activation_rules).toEqual({ ...before.activation_rules, keywords: ['help'] });
				expect(after.data).toEqual(before.data);
				// A GET answer sent back unchanged changes nothing but the update time.
				const roundTrip = await call(context, key, { params: { agent_id: agentId() }, body: { agent: after } });
				expect({ ...roundTrip.body.agent, updated_at: undefined }).toEqual({ ...after, updated_at: undefined });
				expectErrorBody(
					await call(context, key, { params: { agent_id: context.other.agents[0].id }, body: { agent: {} } }),
					403,
				);
				expectErrorBody(await call(context, key, { params: { agent_id: UNKNOWN_UUID }, body: { agent: {} } }), 404);
				expectErrorBody(
					await call(context, key, { params: { agent_id: agentId() }, body: { agent: { tools: 'off' } } }),
					400,
				);
			},
		);
	});
});
