/**
 * The daily messaging budget in the Convo node (#36) through n8n-core against a real
 * `convo-runner start` (its own redis-server, the sandbox in a process of its own): Daily Budget →
 * Set and Get; Template → Send and Message → Send with "Draw on the Daily Budget" count their
 * customer before sending, so a customer beyond the limit fails alone and is never sent (counted in the
 * sandbox's log), a customer messaged already draws nothing more, and without the option a send
 * needs no runner credential at all.
 */
import type { IDataObject } from 'n8n-workflow';

import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { positionalTemplate, startApi, templateSends, useRunnerUnderTest } from '../runner/support';

jest.setTimeout(180_000);

const TOKEN = 'budget-node-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

async function runNode(parameters: IDataObject, items: IDataObject[] = [{}], options: { withRunner?: boolean } = {}) {
	const { sandbox, business } = runner;
	const result = await runWorkflow(itemsThen(items, { ...convoNode(parameters), continueOnFail: true }), {
		credentials: {
			convoApi: { baseUrl: sandbox.baseUrl, accessToken: business.accessToken },
			convoExternalApi: { externalUrl: sandbox.externalUrl, apiKey: business.apiKey },
			...(options.withRunner === false ? {} : { convoRunnerApi: { runnerUrl: base, token: TOKEN } }),
		},
	});
	const error = result.errorOf('Convo') as (Error & { description?: string }) | undefined;
	return { json: result.outputOf('Convo').map((item) => item.json), error };
}

const templateSend = (extra: IDataObject = {}) => {
	const template = positionalTemplate(runner.business);
	return {
		resource: 'template',
		operation: 'send',
		templateId: template.id,
		fromPhoneNumber: `+${runner.business.phoneNumbers[0]}`,
		phone: '={{ $json.phone }}',
		variables: { variable: template.variables.map((name) => ({ name, value: 'x' })) },
		...extra,
	};
};

test('Set and Get the limit; a wrong limit is refused naming the field', async () => {
	expect((await runNode({ resource: 'dailyBudget', operation: 'set', dailyLimit: 2 })).json).toEqual([
		expect.objectContaining({ limit: 2, source: 'set', used: 0, left: 2, next_free_at: null }),
	]);
	expect((await runNode({ resource: 'dailyBudget', operation: 'get' })).json).toEqual([
		expect.objectContaining({ limit: 2, source: 'set', used: 0, left: 2 }),
	]);
	const wrong = await runNode({ resource: 'dailyBudget', operation: 'set', dailyLimit: '={{ 0 }}' });
	expect(wrong.json[0].error).toMatch(/^The runner refused a field: Customers per 24 Hours must be a whole number/);
});

test('sends that draw on the budget stop at the limit: the customer over it fails alone, unsent; one messaged already draws nothing', async () => {
	await runNode({ resource: 'dailyBudget', operation: 'set', dailyLimit: 2 });
	const phones = ['4917470000001', '4917470000002', '4917470000003'];
	const sent = await runNode(
		templateSend({ drawOnDailyBudget: true }),
		[...phones, phones[0]].map((phone) => ({ phone: `+${phone}` })),
	);
	expect(sent.json.map((item) => item.error ?? 'sent')).toEqual([
		'sent',
		'sent',
		'The daily messaging limit is reached: not sent',
		'sent',
	]);
	const sends = await templateSends(runner.sandbox);
	expect(sends.map((message) => message.to.replace(/\D/g, ''))).toEqual([phones[0], phones[1], phones[0]]);
	expect((await runNode({ resource: 'dailyBudget', operation: 'get' })).json[0]).toMatchObject({
		used: 2,
		left: 0,
		next_free_at: expect.any(String),
	});

	// Message → Send draws on the same budget: a new customer is refused there too, nothing sent.
	const before = (await fetch(`${runner.sandbox.baseUrl}/__sandbox/messages`).then((r) => r.json())) as unknown[];
	const message = await runNode(
		{
			resource: 'message',
			operation: 'send',
			to: '+4917470000004',
			channelUuid: runner.business.channelUuid,
			channelType: 'whatsapp',
			messageType: 'text',
			text: 'Hello',
			drawOnDailyBudget: true,
		},
		[{}],
	);
	expect(message.json[0].error).toBe('The daily messaging limit is reached: not sent');
	const after = (await fetch(`${runner.sandbox.baseUrl}/__sandbox/messages`).then((r) => r.json())) as unknown[];
	expect(after).toHaveLength(before.length);

	// Without the option the limit is the service's business, and no runner credential is needed.
	const plain = await runNode(templateSend(), [{ phone: '+4917470000005' }], { withRunner: false });
	expect(plain.json.map((item) => item.error ?? 'sent')).toEqual(['sent']);
});
