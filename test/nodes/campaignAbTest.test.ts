/**
 * Campaign → Create's A/B test (#37) through n8n-core against a real `convo-runner start` and the
 * sandbox: the items go as a draft filled in chunks, each accepted item drawn into a variant or the
 * remainder as its chunk lands; once the test decides, the remainder gets the winner. Counted in
 * the sandbox's own log: each phone one message, a test phone its variant's template, the rest the
 * winner's.
 */
import type { IDataObject } from 'n8n-workflow';

import { variantOf } from '../../runner/src/campaigns/variantSplit';
import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import {
	positionalTemplate,
	sendsByPhone,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
} from '../runner/support';
import { campaignCreateParameters } from './support';

jest.setTimeout(180_000);

const TOKEN = 'ab-node-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

test('an A/B test from the node: the items split by the seed across chunks, the remainder gets the winner, one message each', async () => {
	const first = positionalTemplate(runner.business).id;
	const second = runner.business.templates.find((t) => t.name === 'welcome_named')?.id ?? '';
	const items: IDataObject[] = Array.from({ length: 1200 }, (_, i) => ({
		phone: `+4917656${String(i).padStart(6, '0')}`,
		name: `N${i}`,
		order: `#${i}`,
	}));
	const parameters = campaignCreateParameters(runner.business, first, {
		variables: {
			variable: [
				{ name: '1', value: '={{ $json.name }}' },
				{ name: '2', value: '={{ $json.order }}' },
				{ name: 'first_name', value: '={{ $json.name }}' },
				{ name: 'order_id', value: '={{ $json.order }}' },
			],
		},
		rate: 400,
		additionalFields: {
			abVariants: `${second}:first_name,order_id`,
			abTestShare: '20%',
			abPickBy: 'delivered',
			abDecideAfter: '3s',
			abIfTie: 'first',
		},
	});
	const result = await runWorkflow(itemsThen(items, convoNode(parameters)), {
		credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } },
	});
	expect(result.errorOf('Convo')).toBeUndefined();
	const id = String(result.outputOf('Convo')[0].json.campaign_id ?? result.outputOf('Convo')[0].json.id);
	const get = async () =>
		(await (
			await fetch(`${base}/api/campaigns/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })
		).json()) as IDataObject & {
			state: string;
			counts: Record<string, number>;
			ab_test: { seed: string; winner?: number; split: { test: number[]; remainder: number } };
		};
	const done = await waitFor(
		'the campaign to complete',
		async () => {
			const campaign = await get();
			return campaign.state === 'completed' ? campaign : undefined;
		},
		120_000,
		250,
	);
	expect(done.counts.sent).toBe(1200);
	const { seed, winner, split } = done.ab_test;
	// Chunks of 1,000 and 200 added up: the split counted over both.
	expect(split.test[0] + split.test[1] + split.remainder).toBe(1200);
	expect(winner).toBeDefined();
	const byPhone = sendsByPhone((await templateSends(runner.sandbox)).filter((m) => m.to.startsWith('4917656')));
	const templates = [first, second];
	const wrong = items.filter((item) => {
		const phone = String(item.phone).slice(1);
		const drawn = variantOf({ seed, share: 0.2, variants: 2 }, phone);
		const want = drawn === undefined ? templates[(winner ?? 1) - 1] : templates[drawn];
		const got = byPhone.get(phone) ?? [];
		return got.length !== 1 || got[0].template?.id !== want;
	});
	expect(wrong.map((item) => item.phone)).toEqual([]);
	const testCount = items.filter(
		(item) => variantOf({ seed, share: 0.2, variants: 2 }, String(item.phone).slice(1)) !== undefined,
	).length;
	expect(split.test[0] + split.test[1]).toBe(testCount);
});
