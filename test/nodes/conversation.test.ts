import { admin, badCredentials, external, runConvo, shownError, useSandbox, fieldLabel } from './support';

describe('Convo node: Conversation > Get', () => {
	const context = useSandbox();
	/** The custom field two contacts of business 0 share (the fixture promises one). */
	const shared = () => {
		const contacts = context.business.contacts;
		for (const key of context.business.fieldKeys) {
			for (const a of contacts) {
				const twin = contacts.find(
					(b) => b !== a && b.customFields[key] !== undefined && b.customFields[key] === a.customFields[key],
				);
				if (twin) return { key, value: String(a.customFields[key]), contacts: [a, twin] };
			}
		}
		throw new Error('the fixture has no shared custom field value');
	};
	const lookup = (extra: Record<string, unknown>) => ({ resource: 'conversation', operation: 'get', ...extra });
	const digits = (phone: string) => phone.replace(/\D/g, '');

	it('finds a conversation by a phone number typed with + and spaces', async () => {
		const contact = context.business.contacts[0];
		// More messages than the limit asks for, so the limit has something to cut.
		for (const text of ['one', 'two', 'three', 'four', 'five', 'six', 'hello there']) {
			await admin(context.sandbox, 'POST', 'inbound', {
				business: context.business.id,
				from: contact.phoneNumber,
				text,
			});
		}
		const typed = `${contact.phoneNumber.slice(0, 3)} ${contact.phoneNumber.slice(3)}`;
		const result = await runConvo(context, lookup({ lookupBy: 'phone', phone: typed, messageLimit: 5 }));
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(result.json[0]).toMatchObject({
			contact: { phone_number: digits(contact.phoneNumber) },
			conversation: { id: expect.any(String) },
		});
		const messages = (result.json[0].conversation as { messages: Array<{ text: string }> }).messages;
		// Exactly the limit: the five most recent, oldest first.
		expect(messages.map((m) => m.text)).toEqual(['three', 'four', 'five', 'six', 'hello there']);
	});

	it('finds a conversation by phone and contact field together', async () => {
		const { key, value, contacts } = shared();
		const result = await runConvo(
			context,
			lookup({ lookupBy: 'both', phone: contacts[1].phoneNumber, fieldKey: key, fieldValue: value }),
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect((result.json[0].contact as { phone_number: string }).phone_number).toBe(digits(contacts[1].phoneNumber));
	});

	it('finds a conversation by a short numeric field value (a customer number like 4711)', async () => {
		const contact = context.business.contacts[0];
		const key = context.business.fieldKeys[0];
		const seeded = await external(context, 'PATCH', `/contacts/${contact.uuid}`, { custom_fields: { [key]: '4711' } });
		expect(seeded.status).toBe(200);
		await admin(context.sandbox, 'POST', 'inbound', {
			business: context.business.id,
			from: contact.phoneNumber,
			text: 'order 4711?',
		});
		// Typed as text, and as a number an expression produces: both are the field value "4711".
		for (const fieldValue of ['4711', '={{ 4711 }}']) {
			const result = await runConvo(context, lookup({ lookupBy: 'field', fieldKey: key, fieldValue }));
			expect(result.errorOf('Convo')).toBeUndefined();
			expect(result.json[0]).toMatchObject({
				contact: { id: contact.uuid, phone_number: digits(contact.phoneNumber) },
			});
		}
	});

	it('asks for the other lookup field when several contacts match (409)', async () => {
		const { key, value } = shared();
		const result = await runConvo(context, lookup({ lookupBy: 'field', fieldKey: key, fieldValue: value }));
		expect(shownError(result)).toMatch(
			/Several contacts or conversations match \(409\).*[Aa]dd the other lookup field/,
		);
	});

	it('says nothing matched (404)', async () => {
		const result = await runConvo(context, lookup({ lookupBy: 'phone', phone: '+99 999 9999999' }));
		expect(shownError(result)).toContain('No contact or conversation matches the lookup (404)');
	});

	it('refuses a lookup without a value before sending (400 rule) and a message limit above 200', async () => {
		// An expression that resolves to nothing (a required field left empty would not even run).
		const empty = await runConvo(
			context,
			lookup({ lookupBy: 'field', fieldKey: 'x', fieldValue: '={{ $json.missing ?? "" }}' }),
		);
		expect(shownError(empty)).toContain(`${fieldLabel('conversation', 'get', 'fieldValue')} must not be empty`);
		const tooMany = await runConvo(
			context,
			lookup({ lookupBy: 'phone', phone: context.business.contacts[0].phoneNumber, messageLimit: 201 }),
		);
		expect(shownError(tooMany)).toContain(`${fieldLabel('conversation', 'get', 'messageLimit')} is 201; at most 200`);
	});

	it('says which credential to check (401)', async () => {
		const result = await runConvo(context, lookup({ phone: context.business.contacts[0].phoneNumber }), {
			credentials: badCredentials(context),
		});
		expect(shownError(result)).toContain('Check the API key in the Convo External API credential');
	});

	it('reports an internal error of the service (500)', async () => {
		await admin(context.sandbox, 'POST', 'faults', {
			endpoint: 'GET /api/external/v2/conversations',
			errorRate: 1,
			errorStatus: 500,
		});
		try {
			const result = await runConvo(context, lookup({ phone: context.business.contacts[0].phoneNumber }));
			expect(shownError(result)).toMatch(/The service answered 500.*try again later/);
		} finally {
			await admin(context.sandbox, 'DELETE', 'faults');
		}
	});
});
