import { admin, badCredentials, runConvo, sentMessages, shownError, useSandbox } from './support';

describe('Convo node: Template > Send', () => {
	const context = useSandbox();
	const template = (kind: string, business = context.business) => business.templates.find((t) => t.kind === kind)!;
	const recipient = () => context.business.contacts.find((c) => !c.undeliverable)!;
	const sendTemplate = (extra: Record<string, unknown>) => ({
		resource: 'template',
		operation: 'send',
		templateId: template('named').id,
		fromPhoneNumber: `+${context.business.phoneNumbers[0]}`,
		phone: recipient().phoneNumber,
		...extra,
	});

	it('sends a named-variable template with the recipient typed as +digits', async () => {
		const named = template('named');
		const result = await runConvo(
			context,
			sendTemplate({
				phone: '={{ $json.phone }}',
				variables: { variable: named.variables.map((name) => ({ name, value: `={{ $json.${name} ?? "x" }}` })) },
			}),
			{ items: [{ phone: recipient().phoneNumber.replace('+', '00'), first_name: 'Ada', order_id: 'A-1' }] },
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		// Simplify (on by default): the message id under the same name as Message → Send's.
		expect(result.json[0]).toEqual({
			messageId: expect.any(String),
			success: true,
			recipient: expect.any(String),
			templateName: named.name,
		});
		const messages = await sentMessages(context);
		expect(messages).toHaveLength(1);
		expect(messages[0].to.replace(/\D/g, '')).toBe(recipient().phoneNumber.replace(/\D/g, ''));
		expect(messages[0].text).toContain('Hi Ada, thanks for your order A-1');
	});

	it('sends a positional template and a URL button value', async () => {
		const withButton = template('urlButton');
		const result = await runConvo(
			context,
			sendTemplate({
				templateId: withButton.id,
				variables: { variable: withButton.variables.map((name) => ({ name, value: `value ${name}` })) },
				buttons: { button: withButton.buttons.map((button) => ({ index: button.index, text: 'order-77' })) },
			}),
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		const messages = await sentMessages(context);
		expect(messages).toHaveLength(1);
		expect(JSON.stringify(messages[0])).toContain('order-77');
	});

	it('assigns an agent to the conversation, and says an agent of another business is refused (403)', async () => {
		const positional = template('positional');
		const send = (agentId: string) =>
			sendTemplate({
				templateId: positional.id,
				variables: { variable: positional.variables.map((name) => ({ name, value: `v${name}` })) },
				additionalFields: { agentId },
			});
		const result = await runConvo(context, send(context.business.agents[0].id));
		expect(result.errorOf('Convo')).toBeUndefined();
		expect((await sentMessages(context))[0].request).toMatchObject({
			query: { agent_id: context.business.agents[0].id },
		});

		const foreign = await runConvo(context, send(context.other.agents[0].id));
		expect(shownError(foreign)).toContain('belongs to another business (403)');
		expect(await sentMessages(context)).toHaveLength(1);
	});

	it('returns the raw response when Simplify is off', async () => {
		const named = template('named');
		const result = await runConvo(
			context,
			sendTemplate({ simplify: false, variables: { variable: named.variables.map((name) => ({ name, value: 'x' })) } }),
		);
		expect(result.json[0]).toEqual({
			success: true,
			message_id: expect.any(String),
			recipient: expect.any(String),
			template_name: named.name,
		});
	});

	it('takes variables and URL buttons as JSON (Define Using: JSON), as an AI agent or mapped data fills them', async () => {
		const named = template('named');
		const withButton = template('urlButton');
		const items = [
			{ templateId: named.id, variables: { first_name: 'Jason', order_id: 'J-9' }, buttons: [] },
			{
				templateId: withButton.id,
				variables: {},
				buttons: withButton.buttons.map((button) => ({ index: button.index, text: 'order-88' })),
			},
		];
		const result = await runConvo(
			context,
			sendTemplate({
				templateId: '={{ $json.templateId }}',
				defineUsing: 'json',
				variablesJson: '={{ JSON.stringify($json.variables) }}',
				buttonsJson: '={{ $json.buttons }}',
			}),
			{ items },
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		const messages = await sentMessages(context);
		expect(messages).toHaveLength(2);
		expect(messages.map((message) => message.text).join(' | ')).toContain('Hi Jason, thanks for your order J-9');
		expect(JSON.stringify(messages)).toContain('order-88');
	});

	it('refuses a variable given twice, naming Variables, and sends nothing', async () => {
		const result = await runConvo(
			context,
			sendTemplate({
				variables: {
					variable: [
						{ name: 'first_name', value: 'A' },
						{ name: 'first_name', value: 'B' },
					],
				},
			}),
		);
		expect(shownError(result)).toContain('Variables: the key "first_name" is given twice');
		expect(await sentMessages(context)).toHaveLength(0);
	});

	it('refuses a URL as a variable before sending and points to URL buttons', async () => {
		const result = await runConvo(
			context,
			sendTemplate({ variables: { variable: [{ name: '1', value: 'https://example.com/x' }] } }),
		);
		expect(shownError(result)).toContain('variable 1 holds a URL');
		expect(await sentMessages(context)).toHaveLength(0);
	});

	it('refuses a recipient that is not a phone number before sending', async () => {
		const result = await runConvo(context, sendTemplate({ phone: '12-34' }));
		expect(shownError(result)).toContain('Recipient Phone Number "12-34" has 4 digits');
	});

	it('shows the service message for a send the service refuses (400)', async () => {
		// A positional template sent without its variables passes the contract but not the service.
		const result = await runConvo(context, sendTemplate({ templateId: template('positional').id }));
		expect(shownError(result)).toMatch(/^The service refused the request: 1 is required by template order_update/);
		expect(await sentMessages(context)).toHaveLength(0);
	});

	it('says a from number of another business is refused (403)', async () => {
		const result = await runConvo(context, sendTemplate({ fromPhoneNumber: `+${context.other.phoneNumbers[0]}` }));
		expect(shownError(result)).toContain('belongs to another business (403)');
	});

	it('says which credential to check when the API key is refused (401)', async () => {
		const result = await runConvo(context, sendTemplate({}), { credentials: badCredentials(context) });
		const shown = shownError(result);
		expect(shown).toContain('Check the API key in the Convo External API credential');
		expect(shown).not.toContain('live_wrong_key');
	});

	it('says the template belongs to another business (403)', async () => {
		const result = await runConvo(context, sendTemplate({ templateId: template('named', context.other).id }));
		expect(shownError(result)).toContain('belongs to another business (403)');
		expect(await sentMessages(context)).toHaveLength(0);
	});

	it('reports a failing service (500) and sends nothing', async () => {
		await admin(context.sandbox, 'POST', 'faults', {
			endpoint: 'POST /api/external/v2/send-template',
			errorRate: 1,
			errorStatus: 500,
		});
		try {
			const result = await runConvo(context, sendTemplate({}));
			expect(shownError(result)).toMatch(/The service answered 500.*try again later/);
			expect(await sentMessages(context)).toHaveLength(0);
		} finally {
			await admin(context.sandbox, 'DELETE', 'faults');
		}
	});
});
