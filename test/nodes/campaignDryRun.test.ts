/**
 * Campaign → Create with Options → Dry Run (#23), through n8n-core against a real `convo-runner
 * start` (its own redis-server, the sandbox in a process of its own): the node answers the counts,
 * the grouped reasons, the first rejections with their item index and the estimate, and creates
 * nothing (the runner's list stays empty, no draft either) and sends nothing.
 */
import type { IDataObject } from 'n8n-workflow';

import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { positionalTemplate, startApi, useRunnerUnderTest } from '../runner/support';
import { campaignCreateParameters } from './support';

jest.setTimeout(180_000);

const TOKEN = 'dry-run-test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

async function listed(): Promise<{ items: unknown[]; total: number }> {
	const response = await fetch(`${base}/api/campaigns`, { headers: { authorization: `Bearer ${TOKEN}` } });
	return (await response.json()) as { items: unknown[]; total: number };
}

async function sandboxCounts(): Promise<unknown> {
	return ((await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`)).json()) as { counts: unknown }).counts;
}

test('Dry Run answers accepted/rejected counts, reasons, rejections by item and the estimate, and creates no campaign', async () => {
	const items: IDataObject[] = [
		...Array.from({ length: 6 }, (_, i) => ({
			phone: `+4917450${String(i).padStart(6, '0')}`,
			name: `Customer ${i}`,
			order: `#${i}`,
		})),
		{ phone: '+4917450000001', name: 'Again', order: '#1' },
		{ phone: 'nope', name: 'Bad', order: '#x' },
	];
	const requestsBefore = await sandboxCounts();
	const parameters = campaignCreateParameters(runner.business, positionalTemplate(runner.business).id, {
		rate: 2,
		options: { dryRun: true },
		additionalFields: { testTo: '+4917099999999' },
	});
	const result = await runWorkflow(itemsThen(items, convoNode(parameters)), {
		credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } },
	});
	expect(result.errorOf('Convo')).toBeUndefined();
	const output = result.outputOf('Convo');
	expect(output).toHaveLength(1);
	const answer = output[0].json as IDataObject & {
		rejections: IDataObject[];
		reasons: IDataObject[];
		estimate: IDataObject;
	};
	expect(answer).toMatchObject({
		kind: 'dry_run',
		dry_run: true,
		total: 8,
		accepted: 6,
		rejected: 2,
		counts: { accepted: 6, rejected: 2 },
		test_send: { sent: false },
	});
	expect(answer.rejections).toEqual([
		{ item: 6, line: 7, phone: '+4917450000001', reason: 'phone is already in this campaign (line 2)' },
		{ item: 7, line: 8, phone: 'nope', reason: expect.stringMatching(/^phone /) },
	]);
	expect(answer.reasons).toHaveLength(2);
	expect(answer.estimate).toMatchObject({ rate: 2, seconds: 3 });
	expect(answer.campaign_id).toBeUndefined();

	// Nothing created (no campaign, no draft) and nothing sent.
	await new Promise((resolve) => setTimeout(resolve, 1000));
	expect(await listed()).toMatchObject({ items: [], total: 0 });
	expect(await sandboxCounts()).toEqual(requestsBefore);
});
