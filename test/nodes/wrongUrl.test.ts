import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { credentialsOf, runConvo, shownError, useSandbox } from './support';

// Defect 5: a base URL that points at another server is reported as such, never as a missing record.
describe('Convo node: a credential URL that is not the service', () => {
	const context = useSandbox();
	let server: Server;
	let url = '';
	beforeAll(async () => {
		server = createServer((_request, response) =>
			response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}'),
		);
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	afterAll(async () => await new Promise((resolve) => server.close(resolve)));

	it('Contact > Update of an existing contact says the URL does not look like the service (not "No contact")', async () => {
		const contact = context.business.contacts[0];
		const credentials = credentialsOf(context.sandbox, context.business);
		credentials.convoExternalApi = { ...credentials.convoExternalApi, externalUrl: url };
		const result = await runConvo(
			context,
			{ resource: 'contact', operation: 'update', contactUuid: contact.uuid, updateFields: { name: 'Ann' } },
			{ credentials },
		);
		const shown = shownError(result);
		expect(shown).toMatch(
			/^The URL in the Convo External API credential does not look like the Convo service: it answered 404/,
		);
		expect(shown).not.toContain('No contact');
	});

	it('Message > Get Status names the Convo API credential', async () => {
		const credentials = credentialsOf(context.sandbox, context.business);
		credentials.convoApi = { ...credentials.convoApi, baseUrl: url };
		const result = await runConvo(
			context,
			{ resource: 'message', operation: 'getStatus', messageUuid: 'abc' },
			{ credentials },
		);
		expect(shownError(result)).toMatch(/^The URL in the Convo API credential does not look like the Convo service/);
	});
});
