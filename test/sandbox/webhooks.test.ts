import { messageCreatedEventSchema } from 'convo-contract';
import {
	admin,
	call,
	contactOf,
	digits,
	eventually,
	sleep,
	startReceiver,
	textMessage,
	useSandbox,
	type Receiver,
} from './support';

describe('sandbox: message_created webhooks (SPEC 6)', () => {
	const context = useSandbox();
	let receiver: Receiver;
	beforeEach(async () => {
		receiver = await startReceiver();
	});
	afterEach(async () => {
		await receiver.close();
	});
	const register = (extra: Record<string, unknown> = {}, business = context.business) =>
		admin(context, 'POST', 'webhooks', { business: business.id, url: receiver.url, method: 'POST', ...extra });

	it('trigger 1: an inbound customer message is delivered with every payload field, status received, custom headers', async () => {
		const { id } = await register({ headers: { authorization: 'Bearer receiver-secret' } });
		const contact = context.business.contacts[0];
		await admin(context, 'POST', 'inbound', {
			business: context.business.id,
			from: contact.phoneNumber,
			text: 'Is it open today?',
		});
		const [delivery] = await eventually(() => receiver.received.length === 1 && receiver.received);
		expect(delivery.method).toBe('POST');
		expect(delivery.headers.authorization).toBe('Bearer receiver-secret');
		const event = messageCreatedEventSchema.parse(delivery.body);
		expect(event.payload).toEqual({
			to: context.business.phoneNumbers[0],
			from: digits(contact.phoneNumber),
			text: 'Is it open today?',
			attachments: [],
			status: 'received',
			channel: 'whatsapp',
			contact: {
				href: expect.stringContaining(contact.uuid),
				conversationHref: expect.any(String),
				name: contact.name,
				tags: expect.any(Array),
				uuid: contact.uuid,
				source: 'whatsapp',
				avatarUrl: null,
				createdAt: expect.any(String),
				phoneNumber: contact.phoneNumber,
			},
			createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/),
			metadata: {},
		});
		const deliveries = await eventually(async () => {
			const log = await admin(context, 'GET', 'webhooks/deliveries');
			return log.length === 1 && log;
		});
		expect(deliveries[0]).toMatchObject({
			webhookId: id,
			url: receiver.url,
			method: 'POST',
			statusCode: 200,
			body: delivery.body,
			at: expect.any(String),
		});
		// The receiver's secret is not in the log.
		expect(JSON.stringify(await admin(context, 'GET', 'webhooks/deliveries'))).not.toContain('receiver-secret');
		expect(JSON.stringify(await admin(context, 'GET', 'webhooks'))).not.toContain('receiver-secret');
	});

	it('trigger 2: every successful send through POST /messages/send is delivered with status sent and its metadata (PUT)', async () => {
		await register({ method: 'PUT' });
		const contact = contactOf(context.business, { inWindow: true });
		for (const text of ['one', 'two']) {
			const sent = await call(context, 'sendMessage', {
				body: textMessage(context.business, contact.phoneNumber, text, { metadata: { order: text } }),
			});
			expect(sent.status).toBe(200);
		}
		// A refused send (outside the window) is not a message, so no event.
		expect(
			(
				await call(context, 'sendMessage', {
					body: textMessage(context.business, contactOf(context.business, { inWindow: false }).phoneNumber),
				})
			).status,
		).toBe(400);
		await eventually(() => receiver.received.length >= 2);
		await sleep(150);
		expect(
			receiver.received.map((r) => [r.method, r.body.payload.status, r.body.payload.text, r.body.payload.metadata]),
		).toEqual([
			['PUT', 'sent', 'one', { order: 'one' }],
			['PUT', 'sent', 'two', { order: 'two' }],
		]);
		expect(receiver.received[0].body.payload).toMatchObject({
			from: context.business.phoneNumbers[0],
			to: digits(contact.phoneNumber),
		});
	});

	it('trigger 3: a message sent from the dashboard is never delivered; template sends (B8) are not either', async () => {
		await register();
		const contact = contactOf(context.business, { inWindow: true });
		await admin(context, 'POST', 'dashboard-send', {
			business: context.business.id,
			to: contact.phoneNumber,
			text: 'by hand',
		});
		const template = context.business.templates.find((t) => t.kind === 'positional')!;
		const sent = await call(context, 'sendTemplate', {
			query: { template_id: template.id, from_phone_number: context.business.phoneNumbers[0] },
			body: { phone: digits(contact.phoneNumber), 1: 'a', 2: 'b' },
		});
		expect(sent.status).toBe(200);
		await admin(context, 'POST', 'inbound', {
			business: context.business.id,
			from: contact.phoneNumber,
			text: 'marker',
		});
		await eventually(() => receiver.received.length >= 1);
		await sleep(150);
		expect(receiver.received.map((r) => r.body.payload.text)).toEqual(['marker']);
	});

	it('delivers only to the registrations of the message business', async () => {
		await register({}, context.other);
		await admin(context, 'POST', 'inbound', {
			business: context.business.id,
			from: context.business.contacts[0].phoneNumber,
			text: 'mine',
		});
		await admin(context, 'POST', 'inbound', {
			business: context.other.id,
			from: context.other.contacts[0].phoneNumber,
			text: 'theirs',
		});
		await eventually(() => receiver.received.length >= 1);
		await sleep(150);
		expect(receiver.received.map((r) => r.body.payload.text)).toEqual(['theirs']);
	});

	it('logs every attempt with its status code, failures and unreachable receivers included', async () => {
		receiver.status = 500;
		await register();
		await admin(context, 'POST', 'webhooks', {
			business: context.business.id,
			url: 'http://127.0.0.1:9/unreachable',
			method: 'POST',
		});
		await admin(context, 'POST', 'inbound', {
			business: context.business.id,
			from: context.business.contacts[0].phoneNumber,
			text: 'x',
		});
		const log = await eventually(async () => {
			const attempts = await admin(context, 'GET', 'webhooks/deliveries');
			return attempts.length === 2 && attempts;
		});
		expect(log.find((a: { url: string }) => a.url === receiver.url)).toMatchObject({ statusCode: 500 });
		expect(log.find((a: { url: string }) => a.url !== receiver.url)).toMatchObject({ error: expect.any(String) });
	});

	it('refuses a bad registration with 400 and an unknown business with 404', async () => {
		for (const body of [
			{ business: context.business.id, url: 'not a url' },
			{ business: context.business.id, url: receiver.url, method: 'GET' },
		]) {
			const response = await fetch(`${context.sandbox.baseUrl}/__sandbox/webhooks`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			expect(response.status).toBe(400);
		}
		const unknown = await fetch(`${context.sandbox.baseUrl}/__sandbox/webhooks`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ business: 'nope', url: receiver.url }),
		});
		expect(unknown.status).toBe(404);
	});
});
