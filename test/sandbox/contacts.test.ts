import { LIMITS } from 'convo-contract';
import { admin, call, contactOf, digits, expectErrorBody, textMessage, UNKNOWN_UUID, useSandbox } from './support';

describe('sandbox: contacts and conversations (SPEC B3 to B7, section 3)', () => {
	const context = useSandbox();
	const first = () => context.business.contacts[0];
	const patch = (uuid: string, body: unknown, as = context.business) =>
		call(context, 'updateContact', { params: { uuid }, body, as });

	describe('B3 PATCH /contacts/:uuid', () => {
		it('splits the name into first and last, replaces tags and syncs them, merges custom fields', async () => {
			const contact = first();
			const answer = await patch(contact.uuid, {
				name: '  Ada   King Lovelace ',
				tags: ['new', 'new', 'paid'],
				custom_fields: { city: 'Paris', shoe: 42 },
			});
			expect(answer.status).toBe(200);
			const [updated] = answer.body.contact;
			expect(updated).toMatchObject({
				uuid: contact.uuid,
				name: 'Ada King Lovelace',
				tags: ['new', 'paid'],
				phoneNumber: contact.phoneNumber,
			});
			expect(updated.customFields).toEqual({ ...contact.customFields, city: 'Paris', shoe: 42 });
			const lookup = await call(context, 'getConversation', { query: { phone: digits(contact.phoneNumber) } });
			expect(lookup.body.contact).toMatchObject({ first_name: 'Ada', last_name: 'King Lovelace' });
			// Tags reach the contact's conversations (the sandbox shows them as conversation.tags in B7).
			expect(lookup.body.conversation.tags).toEqual(['new', 'paid']);
			const again = await patch(contact.uuid, { tags: [] });
			expect(again.body.contact[0].tags).toEqual([]);
			expect(
				(await call(context, 'getConversation', { query: { phone: digits(contact.phoneNumber) } })).body.conversation
					.tags,
			).toEqual([]);
			expect(again.body.contact[0].customFields.city).toBe('Paris');
		});

		it('assigns a business user, refuses a stranger (400) and unassigns', async () => {
			const contact = first();
			const assigned = await patch(contact.uuid, { assigned_user: context.business.users[1] });
			expect(assigned.body.contact[0].assignedUser).toBe(context.business.users[1]);
			const stranger = await patch(contact.uuid, { assigned_user: context.other.users[0] });
			expect(stranger.status).toBe(400);
			expect(stranger.body.field).toBe('assigned_user');
			const unassigned = await patch(contact.uuid, { unassign_user: true });
			expect(unassigned.body.contact[0].assignedUser).toBeNull();
		});

		it('changes nothing with an empty body and refuses wrong types (400)', async () => {
			const before = (await patch(first().uuid, {})).body.contact[0];
			expect(before).toMatchObject({ name: first().name, customFields: first().customFields });
			for (const [body, field] of [
				[{ tags: 'vip' }, 'tags'],
				[{ custom_fields: [] }, 'custom_fields'],
				[{ assigned_user: 'not-an-email' }, 'assigned_user'],
				[{ unassign_user: 'yes' }, 'unassign_user'],
				[{ name: '' }, 'name'],
			] as const) {
				const answer = await patch(first().uuid, body);
				expect(answer.status).toBe(400);
				expect(answer.body.field).toBe(field);
			}
		});

		it('answers 404 for an unknown contact and for another business contact', async () => {
			expectErrorBody(await patch(UNKNOWN_UUID, { tags: [] }), 404);
			expectErrorBody(await patch(context.other.contacts[0].uuid, { tags: [] }), 404);
			expectErrorBody(await patch('not-a-uuid', {}), 400);
		});
	});

	describe('B4 GET /contacts/:uuid/messages', () => {
		it('lists newest first with sent/received, default 100, max 200', async () => {
			const contact = contactOf(context.business, { inWindow: true });
			await admin(context, 'POST', 'inbound', {
				business: context.business.id,
				from: contact.phoneNumber,
				text: 'latest question',
			});
			const answer = await call(context, 'getContactMessages', { params: { uuid: contact.uuid } });
			expect(answer.status).toBe(200);
			const messages = answer.body.messages;
			expect(messages[0]).toMatchObject({
				text: 'latest question',
				status: 'received',
				channel: 'whatsapp',
				from: digits(contact.phoneNumber),
			});
			const times = messages.map((m: { createdAt: string }) => m.createdAt);
			expect([...times].sort().reverse()).toEqual(times);
			expect(new Set(messages.map((m: { status: string }) => m.status))).toEqual(new Set(['sent', 'received']));

			for (let i = 0; i < 105; i++)
				await admin(context, 'POST', 'inbound', {
					business: context.business.id,
					from: contact.phoneNumber,
					text: `m${i}`,
				});
			expect(
				(await call(context, 'getContactMessages', { params: { uuid: contact.uuid } })).body.messages,
			).toHaveLength(LIMITS.contactMessagesLimit.default);
			const two = await call(context, 'getContactMessages', { params: { uuid: contact.uuid }, query: { limit: 2 } });
			expect(two.body.messages.map((m: { text: string }) => m.text)).toEqual(['m104', 'm103']);
			expect(
				(await call(context, 'getContactMessages', { params: { uuid: contact.uuid }, query: { limit: 200 } })).status,
			).toBe(200);
			for (const limit of [201, 0, 'ten']) {
				const refused = await call(context, 'getContactMessages', { params: { uuid: contact.uuid }, query: { limit } });
				expect(refused.status).toBe(400);
				expect(refused.body.field).toBe('limit');
			}
		});

		it('answers 404 for an unknown contact and another business contact', async () => {
			expectErrorBody(await call(context, 'getContactMessages', { params: { uuid: UNKNOWN_UUID } }), 404);
			expectErrorBody(
				await call(context, 'getContactMessages', { params: { uuid: context.other.contacts[0].uuid } }),
				404,
			);
		});
	});

	describe('B5, B6 close and reopen (SPEC 3)', () => {
		it('close sets closedAt (the closing time) on all conversations; open clears it; both idempotent', async () => {
			const contact = first();
			const closed = await call(context, 'closeContactConversations', { params: { uuid: contact.uuid } });
			expect(closed.status).toBe(200);
			const closedAt = closed.body.contact[0].closedAt;
			expect(Date.parse(closedAt)).toBeGreaterThan(Date.now() - 60_000);
			await admin(context, 'POST', 'clock', { advanceMs: 5000 });
			const again = await call(context, 'closeContactConversations', { params: { uuid: contact.uuid } });
			expect(again.body.contact[0].closedAt).toBe(closedAt);
			expect((await patch(contact.uuid, {})).body.contact[0].closedAt).toBe(closedAt);
			const opened = await call(context, 'openContactConversations', { params: { uuid: contact.uuid } });
			expect(opened.body.contact[0].closedAt).toBeNull();
			expect(
				(await call(context, 'openContactConversations', { params: { uuid: contact.uuid } })).body.contact[0].closedAt,
			).toBeNull();
		});

		it('accepts an empty JSON body, refuses a body with fields (400), and 404s unknown or foreign contacts', async () => {
			expect(
				(await call(context, 'closeContactConversations', { params: { uuid: first().uuid }, body: {} })).status,
			).toBe(200);
			expect(
				(await call(context, 'closeContactConversations', { params: { uuid: first().uuid }, raw: '' })).status,
			).toBe(200);
			expect(
				(await call(context, 'openContactConversations', { params: { uuid: first().uuid }, body: { open: true } }))
					.status,
			).toBe(400);
			for (const key of ['closeContactConversations', 'openContactConversations'] as const) {
				expectErrorBody(await call(context, key, { params: { uuid: UNKNOWN_UUID } }), 404);
				expectErrorBody(await call(context, key, { params: { uuid: context.other.contacts[0].uuid } }), 404);
			}
		});
	});

	describe('B7 GET /conversations', () => {
		const shared = () => {
			const [a, b] = context.business.contacts;
			const key = context.business.fieldKeys.find(
				(k) => a.customFields[k] !== undefined && a.customFields[k] === b.customFields[k],
			)!;
			return { key, value: String(a.customFields[key]), a, b };
		};
		const lookup = (query: Record<string, string | number>, as = context.business) =>
			call(context, 'getConversation', { query, as });

		it('finds by phone: contact and conversation, the most recent messages oldest first, default 50', async () => {
			const contact = first();
			for (let i = 0; i < 55; i++)
				await admin(context, 'POST', 'inbound', {
					business: context.business.id,
					from: contact.phoneNumber,
					text: `q${i}`,
				});
			const answer = await lookup({ phone: digits(contact.phoneNumber) });
			expect(answer.status).toBe(200);
			expect(answer.body.contact).toMatchObject({
				id: contact.uuid,
				first_name: 'Ada',
				last_name: 'Lovelace',
				phone_number: digits(contact.phoneNumber),
			});
			const conversation = answer.body.conversation;
			expect(conversation).toMatchObject({ platform: 'whatsapp', message_count: 58 });
			expect(conversation.messages).toHaveLength(LIMITS.conversationMessageLimit.default);
			expect(conversation.messages.at(-1)).toMatchObject({
				text: 'q54',
				direction: 'inbound',
				status: 'RECEIVED',
				error: null,
			});
			expect(conversation.last_message_at).toBe(conversation.messages.at(-1).created_at);
			const five = await lookup({ phone: digits(contact.phoneNumber), message_limit: 5 });
			expect(five.body.conversation.messages.map((m: { text: string }) => m.text)).toEqual([
				'q50',
				'q51',
				'q52',
				'q53',
				'q54',
			]);
			expect((await lookup({ phone: digits(contact.phoneNumber), message_limit: 200 })).status).toBe(200);
			expect((await lookup({ phone: digits(contact.phoneNumber), message_limit: 201 })).status).toBe(400);
		});

		it('with several filters all must match; one field value shared by two contacts is 409', async () => {
			const { key, value, a, b } = shared();
			expectErrorBody(await lookup({ field_key: key, field_value: value }), 409);
			expect((await lookup({ field_key: key, field_value: value, phone: digits(b.phoneNumber) })).body.contact.id).toBe(
				b.uuid,
			);
			const other = context.business.contacts.find((c) => c.customFields[key] !== a.customFields[key])!;
			expectErrorBody(await lookup({ field_key: key, field_value: value, phone: digits(other.phoneNumber) }), 404);
			const unique = String(a.customFields.city);
			expect((await lookup({ field_key: 'city', field_value: unique })).body.contact.id).toBe(a.uuid);
		});

		it('400 without a lookup method or with half of the field pair or an unknown field key; 404 for nothing or another business', async () => {
			expectErrorBody(await lookup({}), 400);
			expectErrorBody(await lookup({ field_key: 'city' }), 400);
			expectErrorBody(await lookup({ field_value: 'Berlin' }), 400);
			expectErrorBody(await lookup({ phone: '+4915112340001' }), 400);
			expectErrorBody(await lookup({ field_key: 'no_such_field', field_value: 'x' }), 400);
			expectErrorBody(await lookup({ phone: '4917000000000' }), 404);
			expectErrorBody(await lookup({ phone: digits(context.other.contacts[0].phoneNumber) }), 404);
		});

		it('sees messages sent through the API and from the dashboard', async () => {
			const contact = contactOf(context.business, { inWindow: true });
			await call(context, 'sendMessage', { body: textMessage(context.business, contact.phoneNumber, 'via api') });
			await admin(context, 'POST', 'dashboard-send', {
				business: context.business.id,
				to: contact.phoneNumber,
				text: 'by hand',
			});
			const texts = (await lookup({ phone: digits(contact.phoneNumber) })).body.conversation.messages.map(
				(m: { text: string }) => m.text,
			);
			expect(texts.slice(-2)).toEqual(['via api', 'by hand']);
			// The dashboard message is not one the API accepted.
			expect(
				(await admin(context, 'GET', `messages?business=${context.business.id}`)).map((m: { text: string }) => m.text),
			).toEqual(['via api']);
		});
	});
});
