/**
 * The Convo node's Suppression resource (#23): Add, Check, Get Many and Remove through n8n-core
 * against a real `convo-runner start` (its own redis-server, the sandbox in a process of its own),
 * and a Campaign → Create (with Wait for Completion) whose suppressed item is never sent, counted
 * in the sandbox's log; Options → Transactional sends to it all the same.
 */
import type { IDataObject } from 'n8n-workflow';

import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { positionalTemplate, startApi, templateSends, useRunnerUnderTest } from '../runner/support';
import { campaignCreateParameters } from './support';

jest.setTimeout(180_000);

const TOKEN = 'suppression-node-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

async function runNode(parameters: IDataObject, items: IDataObject[] = [{}]) {
	const result = await runWorkflow(itemsThen(items, convoNode(parameters)), {
		credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } },
	});
	const error = result.errorOf('Convo') as (Error & { description?: string }) | undefined;
	return { json: result.outputOf('Convo').map((item) => item.json), error };
}

const suppression = (operation: string, fields: IDataObject = {}) => ({
	resource: 'suppression',
	operation,
	...fields,
});
const PHONE = '4917460000001';

test('Add, Check, Get Many and Remove; a suppressed item of a campaign is never sent, unless the campaign is Transactional', async () => {
	const added = await runNode(suppression('add', { phone: '={{ $json.phone }}', reason: '={{ $json.why }}' }), [
		{ phone: `+${PHONE}`, why: 'asked in the shop' },
		{ phone: '+49 174 600 00002', why: '' },
	]);
	expect(added.error).toBeUndefined();
	expect(added.json).toEqual([
		expect.objectContaining({ phone: PHONE, reason: 'asked in the shop', source: 'workflow', added: true }),
		expect.objectContaining({ phone: '4917460000002', reason: 'added by a workflow', source: 'workflow', added: true }),
	]);

	const checked = await runNode(suppression('check', { phone: '={{ $json.phone }}' }), [
		{ phone: PHONE },
		{ phone: '+4917460000009' },
	]);
	expect(checked.json).toEqual([
		expect.objectContaining({
			phone: PHONE,
			suppressed: true,
			entry: expect.objectContaining({ reason: 'asked in the shop' }),
		}),
		expect.objectContaining({ phone: '4917460000009', suppressed: false, entry: null }),
	]);
	const all = await runNode(suppression('getAll', { returnAll: true }));
	expect(all.json.map((entry) => entry.phone).sort()).toEqual([PHONE, '4917460000002']);
	expect(await runNode(suppression('getAll', { limit: 1 }))).toMatchObject({ json: [{ phone: '4917460000002' }] });

	// A phone that is none fails naming the field as the node shows it.
	const bad = await runNode(suppression('check', { phone: 'abc' }));
	expect(bad.error?.message).toMatch(/^Phone "abc" is not a phone number/);

	// Campaign → Create: the suppressed item is kept as suppressed with the reason, never sent.
	const items = [PHONE, '4917460000003'].map((phone, i) => ({
		phone: `+${phone}`,
		name: `Customer ${i}`,
		order: `#${i}`,
	}));
	const template = positionalTemplate(runner.business).id;
	const campaign = await runNode(
		campaignCreateParameters(runner.business, template, { options: { waitForCompletion: true, maxWaitSeconds: 60 } }),
		items,
	);
	expect(campaign.error).toBeUndefined();
	const sends = await templateSends(runner.sandbox);
	expect(sends.map((message) => message.to)).toEqual(['4917460000003']);
	const report = await runNode({
		resource: 'campaign',
		operation: 'getReport',
		campaignId: { __rl: true, mode: 'id', value: String(campaign.json[0].campaign_id) },
		outcome: 'suppressed',
		returnAll: true,
	});
	expect(report.json).toEqual([
		expect.objectContaining({
			phone: PHONE,
			outcome: 'suppressed',
			error: expect.stringMatching(/^on the suppression list: asked in the shop \(workflow, /),
		}),
	]);

	const transactional = await runNode(
		campaignCreateParameters(runner.business, template, {
			options: { waitForCompletion: true, maxWaitSeconds: 60, transactional: true },
		}),
		items.slice(0, 1),
	);
	expect(transactional.error).toBeUndefined();
	const got = await runNode({
		resource: 'campaign',
		operation: 'get',
		campaignId: { __rl: true, mode: 'id', value: String(transactional.json[0].campaign_id) },
	});
	expect(got.json[0]).toMatchObject({ transactional: true, counts: { sent: 1, suppressed: 0 } });
	expect((await templateSends(runner.sandbox)).filter((message) => message.to === PHONE)).toHaveLength(1);

	const removed = await runNode(suppression('remove', { phone: '={{ $json.phone }}' }), [
		{ phone: PHONE },
		{ phone: PHONE },
	]);
	expect(removed.json).toEqual([
		expect.objectContaining({ phone: PHONE, removed: true }),
		expect.objectContaining({ phone: PHONE, removed: false }),
	]);
});
