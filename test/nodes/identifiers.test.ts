import { contactNow, runConvo, sentMessages, shownError, useSandbox } from './support';

/** A resource locator value as n8n's editor saves it. */
const locator = (mode: 'id' | 'url', value: string) => ({ __rl: true, mode, value });

describe('Convo node: identifier fields as resource locators', () => {
	const context = useSandbox();
	const ada = () => context.business.contacts[0];

	it('takes a contact By URL, its dashboard link from a contact output (href)', async () => {
		const { href } = await contactNow(context, ada().uuid);
		expect(href).toMatch(new RegExp(`/contacts/${ada().uuid}$`));
		const result = await runConvo(
			context,
			{
				resource: 'contact',
				operation: 'update',
				contactUuid: locator('url', '={{ $json.link }}'),
				updateFields: { name: 'By Link' },
			},
			{ items: [{ link: href }] },
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(result.json[0].uuid).toBe(ada().uuid);
		expect((await contactNow(context, ada().uuid)).name).toBe('By Link');
	});

	it('takes a contact By ID; a fixed value that is not a UUID stops the run before anything is sent', async () => {
		const byId = await runConvo(context, {
			resource: 'contact',
			operation: 'getMessages',
			contactUuid: locator('id', ada().uuid),
		});
		expect(byId.errorOf('Convo')).toBeUndefined();

		// n8n checks the mode's validation before it runs a workflow, as the editor shows it while typing.
		await expect(
			runConvo(context, {
				resource: 'contact',
				operation: 'update',
				contactUuid: locator('id', 'ada'),
				updateFields: { name: 'x' },
			}),
		).rejects.toThrow('Contact ID must be a UUID (8-4-4-4-12 hex digits)');
		await expect(
			runConvo(context, {
				resource: 'contact',
				operation: 'update',
				contactUuid: locator('url', `https://example.com/conversations/${ada().uuid}`),
				updateFields: { name: 'x' },
			}),
		).rejects.toThrow('Not a dashboard link ending in /contacts/<ID>');
		expect((await contactNow(context, ada().uuid)).name).not.toBe('x');
	});

	it('names the field when an expression gives a link that is not a contact link', async () => {
		const wrong = await runConvo(
			context,
			{
				resource: 'contact',
				operation: 'update',
				contactUuid: locator('url', '={{ $json.link }}'),
				updateFields: { name: 'x' },
			},
			{ items: [{ link: 'https://example.com/somewhere/else' }] },
		);
		expect(shownError(wrong)).toContain('Contact ID');
		expect((await contactNow(context, ada().uuid)).name).not.toBe('x');
	});

	it('reads locators inside Additional Fields: a team of another business is refused, so the id was sent', async () => {
		const send = (team: string) =>
			runConvo(context, {
				resource: 'message',
				operation: 'send',
				channelUuid: locator('id', context.business.channelUuid),
				channelType: 'whatsapp',
				to: context.business.contacts.find((c) => c.inWindow && !c.undeliverable)!.phoneNumber,
				messageType: 'text',
				text: 'Routed',
				additionalFields: { teamUuid: locator('id', team) },
			});
		expect((await send(context.business.teams[0])).errorOf('Convo')).toBeUndefined();
		expect(shownError(await send(context.other.teams[0]))).toContain('belongs to another business (403)');
		expect(await sentMessages(context)).toHaveLength(1);
	});

	it('reads Template ID and the optional Agent ID of Template → Send', async () => {
		const template = context.business.templates.find((t) => t.kind === 'named')!;
		const send = (agentId: string) =>
			runConvo(context, {
				resource: 'template',
				operation: 'send',
				templateId: locator('id', template.id),
				fromPhoneNumber: `+${context.business.phoneNumbers[0]}`,
				phone: ada().phoneNumber,
				variables: { variable: template.variables.map((name) => ({ name, value: 'x' })) },
				additionalFields: { agentId: locator('id', agentId) },
			});
		expect((await send(context.business.agents[0].id)).errorOf('Convo')).toBeUndefined();
		expect(shownError(await send(context.other.agents[0].id))).toContain('(403)');
	});
});
