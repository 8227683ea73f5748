import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { testCredential } from '../harness/workflow';
import { runConvo, useSandbox } from './support';

describe('Convo credentials', () => {
	const context = useSandbox();

	describe('test request', () => {
		it('Convo API: accepts a good token, refuses a bad one with a message (401)', async () => {
			const good = await testCredential('convoApi', {
				baseUrl: context.sandbox.baseUrl,
				accessToken: context.business.accessToken,
			});
			expect(good).toMatchObject({ status: 'OK' });
			expect(good.statusCode).not.toBe(401);
			const bad = await testCredential('convoApi', { baseUrl: context.sandbox.baseUrl, accessToken: 'nope' });
			expect(bad).toEqual({
				status: 'Error',
				statusCode: 401,
				message: expect.stringContaining('access token was refused'),
			});
		});

		it('Convo External API: accepts a good key, refuses a bad one with a message (401)', async () => {
			const good = await testCredential('convoExternalApi', {
				externalUrl: context.sandbox.externalUrl,
				apiKey: context.business.apiKey,
			});
			expect(good).toMatchObject({ status: 'OK' });
			expect(good.statusCode).not.toBe(401);
			const bad = await testCredential('convoExternalApi', {
				externalUrl: context.sandbox.externalUrl,
				apiKey: 'live_nope',
			});
			expect(bad).toEqual({
				status: 'Error',
				statusCode: 401,
				message: expect.stringContaining('API key was refused'),
			});
		});

		// Another HTTP server at the URL (n8n itself, a web site, an API gateway) answering 200 or 404
		// must not pass, whatever the secret.
		it.each([
			['200 with a web page', 200, 'text/html', '<html><body>n8n</body></html>'],
			['200 with JSON', 200, 'application/json', '{"data":[]}'],
			['404 with a JSON message', 404, 'application/json', '{"message":"Not Found"}'],
			['404 with a page', 404, 'text/html', '<h1>Not Found</h1>'],
			['400 with a JSON message', 400, 'application/json', '{"message":"Bad Request"}'],
		])('both tests fail against another server answering %s', async (_name, status, type, body) => {
			const server: Server = createServer((_request, response) =>
				response.writeHead(status, { 'content-type': type }).end(body),
			);
			await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
			try {
				const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
				const messaging = await testCredential('convoApi', { baseUrl: url, accessToken: context.business.accessToken });
				expect(messaging).toMatchObject({
					status: 'Error',
					message: expect.stringMatching(/not as the Convo messaging API does: check the Base URL/),
				});
				const external = await testCredential('convoExternalApi', {
					externalUrl: url,
					apiKey: context.business.apiKey,
				});
				expect(external).toMatchObject({
					status: 'Error',
					message: expect.stringMatching(/not as the Convo external API does: check the External API URL/),
				});
			} finally {
				await new Promise((resolve) => server.close(resolve));
			}
		});

		it("a good secret of one API does not pass the other API's test", async () => {
			const swapped = await testCredential('convoExternalApi', {
				externalUrl: context.sandbox.externalUrl,
				apiKey: context.business.accessToken,
			});
			expect(swapped).toMatchObject({ status: 'Error', statusCode: 401 });
		});

		it('normalizes the URLs as users type them', async () => {
			for (const baseUrl of [
				`${context.sandbox.baseUrl}/`,
				`${context.sandbox.baseUrl}/v1`,
				` ${context.sandbox.baseUrl}/v1/ `,
			]) {
				expect(await testCredential('convoApi', { baseUrl, accessToken: context.business.accessToken })).toMatchObject({
					status: 'OK',
				});
			}
			for (const externalUrl of [
				context.sandbox.baseUrl,
				`${context.sandbox.externalUrl}/`,
				`${context.sandbox.baseUrl}/`,
			]) {
				expect(
					await testCredential('convoExternalApi', { externalUrl, apiKey: context.business.apiKey }),
				).toMatchObject({ status: 'OK' });
			}
		});
	});

	it('the node sends each path once, whatever the user typed around the prefix', async () => {
		const credentials = {
			convoApi: { baseUrl: `${context.sandbox.baseUrl}/v1/`, accessToken: context.business.accessToken },
			convoExternalApi: {
				externalUrl: `${context.sandbox.externalUrl}/api/external/v2/`,
				apiKey: context.business.apiKey,
			},
		};
		const contact = context.business.contacts.find((c) => c.inWindow && !c.undeliverable)!;
		const sent = await runConvo(
			context,
			{
				resource: 'message',
				operation: 'send',
				channelUuid: context.business.channelUuid,
				channelType: 'whatsapp',
				to: contact.phoneNumber,
				messageType: 'text',
				text: 'Hi',
			},
			{ credentials },
		);
		expect(sent.errorOf('Convo')).toBeUndefined();
		const closed = await runConvo(
			context,
			{ resource: 'contact', operation: 'closeConversations', contactUuid: contact.uuid },
			{ credentials },
		);
		expect(closed.errorOf('Convo')).toBeUndefined();
	});
});
