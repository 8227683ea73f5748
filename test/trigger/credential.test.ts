import type { ICredentialsDecrypted, ICredentialTestFunctions } from 'n8n-workflow';

import { ConvoTriggerApi } from '../../packages/n8n-nodes-convo/credentials/ConvoTriggerApi.credentials';
import { ConvoTrigger } from '../../packages/n8n-nodes-convo/nodes/ConvoTrigger/ConvoTrigger.node';
import type { ServedTrigger } from '../harness/webhook';
import { serveTrigger } from '../harness/webhook';
import { delivery } from './deliveries';

// The test function reads only its argument; n8n's context is not needed for it.
const context = {} as ICredentialTestFunctions;

async function testCredential(data: Record<string, string>) {
	const credential: ICredentialsDecrypted = { id: '1', name: 'Convo Webhook Auth', type: 'convoTriggerApi', data };
	return await new ConvoTrigger().methods.credentialTest.convoTriggerApiTest.call(context, credential);
}

describe('Convo Webhook Auth credential', () => {
	it('keeps the secret in a password field and is the one the trigger asks for with Header Auth', () => {
		const type = new ConvoTriggerApi();
		const secret = type.properties.find((p) => p.name === 'secret');
		expect(secret?.typeOptions?.password).toBe(true);
		const reference = new ConvoTrigger().description.credentials?.[0];
		expect(reference).toEqual(expect.objectContaining({ name: type.name, testedBy: 'convoTriggerApiTest' }));
		expect(reference?.displayOptions?.show?.authentication).toEqual(['headerAuth']);
	});

	it('passes its test with a valid header name and a secret', async () => {
		expect((await testCredential({ headerName: 'X-Hook-Secret', secret: 's3cret' })).status).toBe('OK');
	});

	it.each([
		[{ headerName: '', secret: 's' }, /Header Name is empty/],
		[{ headerName: 'X Hook', secret: 's' }, /not a valid HTTP header name/],
		[{ headerName: 'X-Hook', secret: '' }, /Secret is empty/],
	])('fails its test for %j', async (data, message) => {
		const result = await testCredential(data);
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(message);
	});
});

describe('Convo Trigger with an incomplete credential', () => {
	let served: ServedTrigger | undefined;
	afterEach(async () => served?.close());

	it('answers 500 naming the problem (not the secret) and starts nothing', async () => {
		served = await serveTrigger({ auth: { headerName: 'X-Hook', secret: '' } });
		const response = await fetch(served.url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-hook': '' },
			body: JSON.stringify(delivery()),
		});
		expect(response.status).toBe(500);
		expect(((await response.json()) as { message: string }).message).toMatch(
			/credential is incomplete: Secret is empty/,
		);
		expect(served.started()).toBe(0);
	});
});
