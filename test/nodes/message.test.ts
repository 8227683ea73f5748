import type { INodePropertyOptions } from 'n8n-workflow';

import { Convo } from '../../packages/n8n-nodes-convo/nodes/Convo/Convo.node';
import { admin, badCredentials, fieldLabel, runConvo, sentMessages, shownError, useSandbox } from './support';

describe('Convo node: Message', () => {
	const context = useSandbox();
	const contact = (inWindow: boolean) =>
		context.business.contacts.find((c) => c.inWindow === inWindow && !c.undeliverable)!;
	/** "+49 151 ..." typed with spaces and dashes, as users do. */
	const typed = (phone: string) => `${phone.slice(0, 3)} ${phone.slice(3, 6)}-${phone.slice(6)}`;
	const send = (extra: Record<string, unknown>) => ({
		resource: 'message',
		operation: 'send',
		channelUuid: context.business.channelUuid,
		channelType: 'whatsapp',
		...extra,
	});

	it('sends a text message to a number typed with spaces and dashes', async () => {
		const to = contact(true).phoneNumber;
		const result = await runConvo(
			context,
			send({
				to: '={{ $json.phone }}',
				messageType: 'text',
				text: '=Hello {{ $json.name }}',
				additionalFields: { metadata: { pairs: [{ key: 'order', value: '42' }] } },
			}),
			{ items: [{ phone: typed(to), name: 'Ada' }] },
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(result.json).toEqual([{ messageId: expect.any(String), status: 'enqueued' }]);
		expect(result.output[0].pairedItem).toEqual({ item: 0 });
		const messages = await sentMessages(context);
		expect(messages).toHaveLength(1);
		expect(messages[0]).toMatchObject({
			uuid: result.json[0].messageId,
			text: 'Hello Ada',
			type: 'text',
			metadata: { order: '42' },
		});
		expect(messages[0].to.replace(/\D/g, '')).toBe(to.replace(/\D/g, ''));
	});

	it('sends an image by URL with a caption, and returns the raw response when Simplify is off', async () => {
		const result = await runConvo(
			context,
			send({
				to: contact(true).phoneNumber,
				messageType: 'image',
				mediaUrl: 'https://example.com/cat.png',
				caption: 'A cat',
				simplify: false,
			}),
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(result.json).toEqual([{ message: expect.objectContaining({ uuid: expect.any(String) }) }]);
		expect(await sentMessages(context)).toEqual([
			expect.objectContaining({ type: 'image', content: { url: 'https://example.com/cat.png', caption: 'A cat' } }),
		]);
	});

	it('sends a document with the file name the recipient sees', async () => {
		const result = await runConvo(
			context,
			send({
				to: contact(true).phoneNumber,
				messageType: 'document',
				mediaUrl: 'https://example.com/a1b2.pdf',
				filename: 'invoice.pdf',
			}),
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect((await sentMessages(context))[0]).toMatchObject({
			type: 'document',
			content: { url: 'https://example.com/a1b2.pdf', filename: 'invoice.pdf' },
		});
	});

	it('sends a template message outside the 24-hour window', async () => {
		const template = context.business.templates.find((t) => t.kind === 'positional')!;
		const result = await runConvo(
			context,
			send({
				to: contact(false).phoneNumber,
				messageType: 'template',
				templateUuid: template.id,
				optinContact: true,
				templateValues: { values: template.variables.map((name) => ({ value: `v${name}` })) },
			}),
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		const messages = await sentMessages(context);
		expect(messages).toHaveLength(1);
		expect(messages[0]).toMatchObject({ template: { id: template.id }, text: expect.stringContaining('v1') });
		expect(messages[0].text).toContain('v2');
		// What the service received, not the node's echo: the opt-in and the template travelled with the send.
		expect(messages[0].request).toMatchObject({ body: { template_uuid: template.id, optin_contact: true } });
	});

	it('sends with assignment, team, bot status and extra response fields', async () => {
		const result = await runConvo(
			context,
			send({
				to: contact(true).phoneNumber,
				messageType: 'text',
				text: 'Routed',
				additionalFields: {
					assignedUser: context.business.users[1],
					teamUuid: context.business.teams[0],
					botStatus: 'bot_end',
					fields: ['contact', 'conversation'],
				},
			}),
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(await sentMessages(context)).toEqual([expect.objectContaining({ text: 'Routed' })]);
		// Each setting as the service received it (the response does not show them).
		expect((await sentMessages(context))[0].request).toMatchObject({
			body: {
				assigned_user: context.business.users[1],
				team_uuid: context.business.teams[0],
				bot_status: 'bot_end',
				fields: 'contact,conversation',
			},
		});

		const foreignTeam = await runConvo(
			context,
			send({
				to: contact(true).phoneNumber,
				messageType: 'text',
				text: 'x',
				additionalFields: { teamUuid: context.other.teams[0] },
			}),
		);
		expect(shownError(foreignTeam)).toContain('This resource belongs to another business (403)');
		expect(await sentMessages(context)).toHaveLength(1);
	});

	it('shows the service message when free text is refused outside the window (400)', async () => {
		const result = await runConvo(context, send({ to: contact(false).phoneNumber, messageType: 'text', text: 'Hi' }));
		expect(shownError(result)).toMatch(/^The service refused the request: .*(24|window|template)/i);
		// The fix is named: send a template, here or with Template → Send.
		expect(shownError(result)).toMatch(/\| .*24-hour customer-care window.*Message Type "Template".*Template → Send/);
		expect(await sentMessages(context)).toHaveLength(0);
	});

	it('explains in the editor when each of the two template sends fits, each pointing to the other', () => {
		const { properties } = new Convo().getNodeType(1).description;
		const field = (name: string, operation: string, resource: string) =>
			properties.find(
				(p) =>
					p.name === name &&
					p.displayOptions?.show?.operation?.includes(operation) &&
					p.displayOptions?.show?.resource?.includes(resource),
			);
		const notice = properties.find((p) => p.type === 'notice' && p.displayOptions?.show?.resource?.includes('message'));
		expect(notice?.displayName).toMatch(/24 hours/);
		expect(notice?.displayName).toMatch(/Template → Send/);
		const templateType = (field('messageType', 'send', 'message')?.options as INodePropertyOptions[]).find(
			(o) => o.value === 'template',
		);
		expect(templateType?.description).toMatch(/Template → Send/);
		const operations = properties.filter((p) => p.name === 'operation');
		const templateSend = operations
			.find((p) => p.displayOptions?.show?.resource?.includes('template'))
			?.options?.find((o) => (o as INodePropertyOptions).value === 'send') as INodePropertyOptions;
		expect(templateSend.description).toMatch(/Message → Send/);
		const templateNotice = properties.find(
			(p) => p.type === 'notice' && p.displayOptions?.show?.resource?.includes('template'),
		);
		expect(templateNotice?.displayName).toMatch(/Message → Send/);
	});

	it('refuses a value that is not a phone number before sending', async () => {
		const result = await runConvo(context, send({ to: 'call me maybe', messageType: 'text', text: 'Hi' }));
		expect(shownError(result)).toContain('To "call me maybe" is not a phone number');
		expect(await sentMessages(context)).toHaveLength(0);
	});

	it('takes metadata as JSON too, and refuses a key given twice across both, naming Metadata', async () => {
		const to = contact(true).phoneNumber;
		const result = await runConvo(
			context,
			send({
				to,
				messageType: 'text',
				text: 'Hi',
				additionalFields: { metadata: { pairs: [{ key: 'order', value: '42' }] }, metadataJson: '={{ $json.meta }}' },
			}),
			{ items: [{ meta: { source: 'shop', campaign: 'spring' } }] },
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect((await sentMessages(context))[0].metadata).toEqual({ order: '42', source: 'shop', campaign: 'spring' });

		const twice = await runConvo(
			context,
			send({
				to,
				messageType: 'text',
				text: 'Hi',
				additionalFields: { metadata: { pairs: [{ key: 'order', value: '42' }] }, metadataJson: '{"order": "43"}' },
			}),
		);
		expect(shownError(twice)).toContain('Metadata: the key "order" is given twice');
		expect(await sentMessages(context)).toHaveLength(1);
	});

	it('checks the metadata limits before sending', async () => {
		const pairs = Array.from({ length: 11 }, (_, i) => ({ key: `k${i}`, value: 'v' }));
		const result = await runConvo(
			context,
			send({
				to: contact(true).phoneNumber,
				messageType: 'text',
				text: 'Hi',
				additionalFields: { metadata: { pairs } },
			}),
		);
		expect(shownError(result)).toContain(
			`${fieldLabel('message', 'send', 'additionalFields.metadata')} has 11 pairs; at most 10`,
		);
		const long = await runConvo(
			context,
			send({
				to: contact(true).phoneNumber,
				messageType: 'text',
				text: 'Hi',
				additionalFields: { metadata: { pairs: [{ key: 'k'.repeat(51), value: 'v' }] } },
			}),
		);
		expect(shownError(long)).toMatch(/key "k+" is 51 characters; at most 50/);
		expect(await sentMessages(context)).toHaveLength(0);
	});

	it('says which credential to check when the access token is refused (401)', async () => {
		const result = await runConvo(context, send({ to: contact(true).phoneNumber, messageType: 'text', text: 'Hi' }), {
			credentials: badCredentials(context),
		});
		const shown = shownError(result);
		expect(shown).toContain('Check the access token in the Convo API credential');
		expect(shown).not.toContain('wrong-token');
		expect(await sentMessages(context)).toHaveLength(0);
	});

	it('says where to look when the service cannot be reached', async () => {
		await admin(context.sandbox, 'POST', 'faults', { endpoint: 'POST /v1/messages/send', dropConnection: true });
		try {
			const result = await runConvo(context, send({ to: contact(true).phoneNumber, messageType: 'text', text: 'Hi' }));
			const shown = shownError(result);
			expect(shown).toMatch(/^Could not reach the Convo service: .+\| Check the URL in the Convo API credential/);
			expect(shown).not.toContain(context.business.accessToken);
		} finally {
			await admin(context.sandbox, 'DELETE', 'faults');
		}
	});

	it('gets the status of a sent message, chained by messageId', async () => {
		const sent = await runConvo(context, send({ to: contact(true).phoneNumber, messageType: 'text', text: 'Hi' }));
		const uuid = sent.json[0].messageId as string;
		const result = await runConvo(
			context,
			{ resource: 'message', operation: 'getStatus', messageUuid: '={{ $json.messageId }}' },
			{
				items: sent.json,
			},
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(result.json[0]).toMatchObject({
			uuid,
			status: expect.any(String),
			messageStatusPayload: expect.any(Object),
		});
	});

	it('names the message when its status is unknown (404)', async () => {
		const result = await runConvo(context, {
			resource: 'message',
			operation: 'getStatus',
			messageUuid: '00000000-0000-0000-0000-000000000001',
		});
		expect(shownError(result)).toContain(
			`No message with ${fieldLabel('message', 'getStatus', 'messageUuid')} 00000000-0000-0000-0000-000000000001`,
		);
	});
});
