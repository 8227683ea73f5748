/**
 * Campaign → Create's "Test Send To" (#21 item 17) through n8n-core against a real
 * `convo-runner start` and the sandbox: the first item's message goes to the test phone, then
 * every item once; a template the service does not know fails the node naming Test Send To and
 * the service's reason, and nobody is sent. Counted in the sandbox's own log.
 */
import { randomUUID } from 'node:crypto';

import type { IDataObject } from 'n8n-workflow';

import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { positionalTemplate, startApi, templateSends, useRunnerUnderTest, waitFor } from '../runner/support';
import { campaignCreateParameters } from './support';

jest.setTimeout(180_000);

const TOKEN = 'test-send-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

const phoneOf = (seed: number, i: number) => `49176${String(seed).padStart(2, '0')}${String(i).padStart(6, '0')}`;
const itemsOf = (seed: number, count: number) =>
	Array.from({ length: count }, (_, i) => ({
		phone: `+${phoneOf(seed, i)}`,
		name: `Customer ${i}`,
		order: `#${i}`,
	})) as IDataObject[];
const sendsTo = async (phones: string[]) => {
	const wanted = new Set(phones);
	return (await templateSends(runner.sandbox)).filter((message) => wanted.has(message.to));
};

async function create(templateId: string, testTo: string, items: IDataObject[]) {
	const parameters = campaignCreateParameters(runner.business, templateId, { additionalFields: { testTo } });
	const result = await runWorkflow(itemsThen(items, convoNode(parameters)), {
		credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } },
	});
	return {
		json: result.outputOf('Convo').map((item) => item.json),
		error: result.errorOf('Convo') as (Error & { description?: string }) | undefined,
	};
}

test("Test Send To with a good template: the first item's message reaches the test phone, then every item once; the output says the test was accepted", async () => {
	const test = phoneOf(1, 99);
	const items = itemsOf(1, 4);
	const result = await create(positionalTemplate(runner.business).id, `+${test}`, items);
	expect(result.error).toBeUndefined();
	expect(result.json[0]).toMatchObject({
		state: 'running',
		accepted: 4,
		test_send: { to: test, accepted: true, message_id: expect.any(String) },
	});
	const phones = items.map((_, i) => phoneOf(1, i));
	await waitFor('every item sent', async () => (await sendsTo(phones)).length === 4);
	await new Promise((resolve) => setTimeout(resolve, 1000));
	const tests = await sendsTo([test]);
	expect(tests).toHaveLength(1);
	expect(tests[0].template?.variables).toEqual({ 1: 'Customer 0', 2: '#0' });
	expect((await sendsTo(phones)).length).toBe(4);
});

test("Test Send To with a template the service does not know: the node fails naming Test Send To and the service's 404, and nobody is sent", async () => {
	const test = phoneOf(2, 99);
	const items = itemsOf(2, 3);
	const result = await create(randomUUID(), test, items);
	expect(result.error?.message).toMatch(/not started: .*Test Send To \d+: the service refused the test send \(404/);
	await new Promise((resolve) => setTimeout(resolve, 3000));
	expect(await sendsTo([test, ...items.map((_, i) => phoneOf(2, i))])).toEqual([]);
});

test('a Test Send To that is no phone number fails before anything is sent, naming the field', async () => {
	const result = await create(positionalTemplate(runner.business).id, 'call me', itemsOf(3, 1));
	expect(result.error?.message).toMatch(/^Test Send To .*not a phone number/);
});
