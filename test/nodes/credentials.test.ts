import { testCredential } from '../harness/workflow';
import { runConvo, useSandbox } from './support';

describe('Convo credentials', () => {
	const context = useSandbox();

	describe('test request', () => {
		it('Convo API: accepts a good token, refuses a bad one with a message (401)', async () => {
			const good = await testCredential('convoApi', { baseUrl: context.sandbox.baseUrl, accessToken: context.business.accessToken });
			expect(good).toMatchObject({ status: 'OK' });
			expect(good.statusCode).not.toBe(401);
			const bad = await testCredential('convoApi', { baseUrl: context.sandbox.baseUrl, accessToken: 'nope' });
			expect(bad).toEqual({ status: 'Error', statusCode: 401, message: expect.stringContaining('access token was refused') });
		});

		it('Convo External API: accepts a good key, refuses a bad one with a message (401)', async () => {
			const good = await testCredential('convoExternalApi', { externalUrl: context.sandbox.externalUrl, apiKey: context.business.apiKey });
			expect(good).toMatchObject({ status: 'OK' });
			expect(good.statusCode).not.toBe(401);
			const bad = await testCredential('convoExternalApi', { externalUrl: context.sandbox.externalUrl, apiKey: 'live_nope' });
			expect(bad).toEqual({ status: 'Error', statusCode: 401, message: expect.stringContaining('API key was refused') });
		});

		it('normalizes the URLs as users type them', async () => {
			for (const baseUrl of [`${context.sandbox.baseUrl}/`, `${context.sandbox.baseUrl}/v1`, ` ${context.sandbox.baseUrl}/v1/ `]) {
				expect(await testCredential('convoApi', { baseUrl, accessToken: context.business.accessToken })).toMatchObject({ status: 'OK' });
			}
			for (const externalUrl of [context.sandbox.baseUrl, `${context.sandbox.externalUrl}/`, `${context.sandbox.baseUrl}/`]) {
				expect(await testCredential('convoExternalApi', { externalUrl, apiKey: context.business.apiKey })).toMatchObject({ status: 'OK' });
			}
		});
	});

	it('the node sends each path once, whatever the user typed around the prefix', async () => {
		const credentials = {
			convoApi: { baseUrl: `${context.sandbox.baseUrl}/v1/`, accessToken: context.business.accessToken },
			convoExternalApi: { externalUrl: `${context.sandbox.externalUrl}/api/external/v2/`, apiKey: context.business.apiKey },
		};
		const contact = context.business.contacts.find((c) => c.inWindow && !c.undeliverable)!;
		const sent = await runConvo(
			context,
			{ resource: 'message', operation: 'send', channelUuid: context.business.channelUuid, channelType: 'whatsapp', to: contact.phoneNumber, messageType: 'text', text: 'Hi' },
			{ credentials },
		);
		expect(sent.errorOf('Convo')).toBeUndefined();
		const closed = await runConvo(context, { resource: 'contact', operation: 'closeConversations', contactUuid: contact.uuid }, { credentials });
		expect(closed.errorOf('Convo')).toBeUndefined();
	});
});
