import { LIMITS } from 'convo-contract';
import { admin, call, contactOf, digits, expectErrorBody, textMessage, UNKNOWN_UUID, useSandbox } from './support';

describe('sandbox: messaging API (SPEC A1, A2)', () => {
	const context = useSandbox();
	const send = (body: unknown, as = context.business) => call(context, 'sendMessage', { body, as });

	describe('A2 POST /messages/send', () => {
		it('sends free text to a contact inside the 24-hour window: enqueued, logged once', async () => {
			const contact = contactOf(context.business, { inWindow: true });
			const answer = await send(textMessage(context.business, contact.phoneNumber, 'Your table is ready'));
			expect(answer.status).toBe(200);
			expect(answer.body).toEqual({ message: { uuid: expect.any(String), status: 'enqueued' } });
			const log = await admin(context, 'GET', `messages?business=${context.business.id}`);
			expect(log).toEqual([
				expect.objectContaining({
					uuid: answer.body.message.uuid,
					to: digits(contact.phoneNumber),
					type: 'text',
					text: 'Your table is ready',
					status: 'enqueued',
				}),
			]);
			// The other business sees none of it.
			expect(await admin(context, 'GET', `messages?business=${context.other.id}`)).toEqual([]);
		});

		it('refuses free text outside the 24-hour window (rule 1) and to an unknown number, naming template_uuid', async () => {
			const contact = contactOf(context.business, { inWindow: false });
			const refused = await send(textMessage(context.business, contact.phoneNumber));
			expect(refused.status).toBe(400);
			expect(refused.body).toMatchObject({ field: 'template_uuid', message: expect.stringContaining('24 hours') });
			const stranger = await send(textMessage(context.business, '+4917000000099'));
			expect(stranger.status).toBe(400);
			expect(await admin(context, 'GET', `messages?business=${context.business.id}`)).toEqual([]);
		});

		it('passes a template message outside the window, filling template_values in order', async () => {
			const contact = contactOf(context.business, { inWindow: false });
			const template = context.business.templates.find((t) => t.kind === 'positional')!;
			const answer = await send(
				textMessage(context.business, contact.phoneNumber, '', {
					template_uuid: template.id,
					template_values: ['Grace', 'A-7'],
				}),
			);
			expect(answer.status).toBe(200);
			const [logged] = await admin(context, 'GET', `messages?business=${context.business.id}`);
			expect(logged.text).toBe('Hello Grace, your order A-7 has shipped.');
			expect(logged.template).toMatchObject({ id: template.id, name: template.name });
			const missing = await send(
				textMessage(context.business, contact.phoneNumber, '', {
					template_uuid: template.id,
					template_values: ['Grace'],
				}),
			);
			expect(missing.status).toBe(400);
			expect(missing.body.field).toBe('template_values[1]');
		});

		it('opens the window with an inbound message and closes it 24 hours later (service clock)', async () => {
			const contact = contactOf(context.business, { inWindow: false });
			await admin(context, 'POST', 'inbound', { business: context.business.id, from: contact.phoneNumber, text: 'hi' });
			expect((await send(textMessage(context.business, contact.phoneNumber))).status).toBe(200);
			await admin(context, 'POST', 'clock', { advanceMs: LIMITS.customerCareWindowMs + 1000 });
			expect((await send(textMessage(context.business, contact.phoneNumber))).status).toBe(400);
		});

		it('sends media with a url in content (rule 2) and refuses media without one', async () => {
			const contact = contactOf(context.business, { inWindow: true });
			const image = await send(
				textMessage(context.business, contact.phoneNumber, '', {
					type: 'image',
					content: { url: 'https://cdn.example.com/a.png', caption: 'Menu' },
				}),
			);
			expect(image.status).toBe(200);
			const [logged] = await admin(context, 'GET', `messages?business=${context.business.id}`);
			expect(logged).toMatchObject({ type: 'image', content: { url: 'https://cdn.example.com/a.png' } });
			for (const type of ['image', 'document', 'audio', 'video']) {
				const refused = await send(
					textMessage(context.business, contact.phoneNumber, '', { type, content: { text: 'no url' } }),
				);
				expect(refused.status).toBe(400);
				expect(refused.body.field).toMatch(/^content/);
			}
		});

		it.each([
			['to', undefined],
			['from', undefined],
			['type', undefined],
			['content', undefined],
			['channel_uuid', undefined],
			['type', 'sticker'],
			['channel_uuid', 'not-a-uuid'],
			['content', 'text'],
			['to', 42],
		])('refuses %s = %p with 400 naming the field', async (field, value) => {
			const body: Record<string, unknown> = textMessage(
				context.business,
				contactOf(context.business, { inWindow: true }).phoneNumber,
			);
			if (value === undefined) delete body[field];
			else body[field] = value;
			const answer = await send(body);
			expect(answer.status).toBe(400);
			expect(answer.body.field).toBe(field);
			expect(answer.body.message).toContain(field);
		});

		describe('metadata limits (SPEC 8)', () => {
			const withMetadata = (metadata: Record<string, string>) =>
				send(
					textMessage(context.business, contactOf(context.business, { inWindow: true }).phoneNumber, 'x', { metadata }),
				);
			const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

			it('accepts 10 pairs, 50-character keys and 500-character values', async () => {
				expect((await withMetadata(pairs(LIMITS.metadataPairs))).status).toBe(200);
				expect(
					(await withMetadata({ ['k'.repeat(LIMITS.metadataKeyLength)]: 'v'.repeat(LIMITS.metadataValueLength) }))
						.status,
				).toBe(200);
			});

			it('refuses 11 pairs, a 51-character key and a 501-character value', async () => {
				for (const metadata of [
					pairs(LIMITS.metadataPairs + 1),
					{ ['k'.repeat(LIMITS.metadataKeyLength + 1)]: 'v' },
					{ key: 'v'.repeat(LIMITS.metadataValueLength + 1) },
				]) {
					const answer = await withMetadata(metadata);
					expect(answer.status).toBe(400);
					expect(answer.body.field).toMatch(/^metadata/);
				}
			});
		});

		it('refuses another business channel (403), an unknown channel (404) and a user who is not of the business (400)', async () => {
			const to = contactOf(context.business, { inWindow: true }).phoneNumber;
			expect(
				(await send(textMessage(context.business, to, 'x', { channel_uuid: context.other.channelUuid }))).status,
			).toBe(403);
			expect((await send(textMessage(context.business, to, 'x', { channel_uuid: UNKNOWN_UUID }))).status).toBe(404);
			const stranger = await send(textMessage(context.business, to, 'x', { assigned_user: 'nobody@example.com' }));
			expect(stranger.status).toBe(400);
			expect(stranger.body.field).toBe('assigned_user');
			const ok = await send(
				textMessage(context.business, to, 'x', {
					assigned_user: context.business.users[0],
					team_uuid: context.business.teams[0],
					bot_status: 'bot_start',
					optin_contact: true,
					fields: 'contact,conversation',
				}),
			);
			expect(ok.status).toBe(200);
			expect((await send(textMessage(context.business, to, 'x', { team_uuid: context.other.teams[0] }))).status).toBe(
				403,
			);
			expect(
				(await send(textMessage(context.business, to, 'x', { template_uuid: context.other.templates[0].id }))).status,
			).toBe(403);
		});
	});

	describe('the admin log of messages', () => {
		it('pages with offset and limit, in the order received; a wrong page is named', async () => {
			const contact = contactOf(context.business, { inWindow: true });
			const texts = ['page one', 'page two', 'page three'];
			for (const text of texts) await send(textMessage(context.business, contact.phoneNumber, text));
			const log = (path: string) =>
				admin<Array<{ text: string }>>(context, 'GET', `messages?business=${context.business.id}&${path}`);
			const all = (await log('')).map((message) => message.text);
			const last = all.slice(-3);
			expect(last).toEqual(texts);
			const first = all.length - 3;
			expect((await log(`offset=${first + 1}&limit=1`)).map((message) => message.text)).toEqual(['page two']);
			expect((await log(`offset=${first + 1}`)).map((message) => message.text)).toEqual(['page two', 'page three']);
			expect(await log(`offset=${all.length}&limit=5`)).toEqual([]);
			await expect(log('limit=0')).rejects.toThrow(/answered 400: .*limit/);
			await expect(log('limit=100001')).rejects.toThrow(/answered 400: .*limit/);
			await expect(log('offset=-1')).rejects.toThrow(/answered 400: .*offset/);
		});
	});

	describe('A1 GET /messages/status/:uuid and the status progression', () => {
		const status = async (uuid: string, as = context.business) =>
			call(context, 'getMessageStatus', { params: { uuid }, as });

		it('moves enqueued -> sent -> delivered -> read over service time, with a messageStatusPayload', async () => {
			const contact = contactOf(context.business, { inWindow: true });
			const { body } = await send(textMessage(context.business, contact.phoneNumber));
			const seen: string[] = [];
			for (const advanceMs of [0, 2000, 2000, 6000]) {
				await admin(context, 'POST', 'clock', { advanceMs });
				const answer = await status(body.message.uuid);
				expect(answer.status).toBe(200);
				expect(answer.body.message).toMatchObject({
					uuid: body.message.uuid,
					messageStatusPayload: {
						id: expect.stringMatching(/^[0-9a-f-]{36}$/),
						type: answer.body.message.status,
						payload: { type: 'session', whatsappMessageId: expect.any(String) },
						destination: digits(contact.phoneNumber),
					},
				});
				seen.push(answer.body.message.status);
			}
			expect(seen).toEqual(['enqueued', 'sent', 'delivered', 'read']);
		});

		it('ends in failed for an undeliverable contact, shown as failed (B4) and ERROR (B7)', async () => {
			const contact = contactOf(context.business, { inWindow: true, undeliverable: true });
			const { body } = await send(textMessage(context.business, contact.phoneNumber, 'lost'));
			expect((await status(body.message.uuid)).body.message.status).toBe('enqueued');
			await admin(context, 'POST', 'clock', { advanceMs: 60_000 });
			expect((await status(body.message.uuid)).body.message.status).toBe('failed');
			const messages = await call(context, 'getContactMessages', { params: { uuid: contact.uuid } });
			expect(messages.body.messages[0]).toMatchObject({ uuid: body.message.uuid, status: 'failed' });
			const lookup = await call(context, 'getConversation', { query: { phone: digits(contact.phoneNumber) } });
			expect(lookup.body.conversation.messages.at(-1)).toMatchObject({
				id: body.message.uuid,
				status: 'ERROR',
				error: expect.any(String),
			});
		});

		it('answers 404 for an unknown message and for another business message', async () => {
			const contact = contactOf(context.business, { inWindow: true });
			const { body } = await send(textMessage(context.business, contact.phoneNumber));
			expectErrorBody(await status('no-such-message'), 404);
			expectErrorBody(await status(body.message.uuid, context.other), 404);
		});
	});
});
