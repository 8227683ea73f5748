/**
 * Campaign → Create's Send Window and End Time (#23) through n8n-core against a real
 * `convo-runner start` and the sandbox: items go as a draft filled in chunks, so a windowed
 * draft's zone lists are built chunk by chunk. An item's `tz` variable sets its zone and is not
 * sent as a template variable. The window is set around the current UTC hour (the real clock): an
 * item in UTC is open, one in UTC+12 closed, so it waits and expires at the End Time. Once the open
 * ones have arrived and the closed one is seen waiting, the test moves the campaign's clock past
 * its End Time (moveCampaignClock) instead of waiting a minute for it. Counted in the sandbox's own log.
 */
import type { IDataObject } from 'n8n-workflow';

import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import {
	moveCampaignClock,
	positionalTemplate,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
} from '../runner/support';
import { campaignCreateParameters } from './support';

jest.setTimeout(180_000);

const TOKEN = 'window-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

const pad = (hour: number) => `${String(hour).padStart(2, '0')}:00`;
/** The End Time, from the workflow's start: room for a loaded machine to send the open zone first. */
const END_AFTER_MS = 60_000;

test('Send Window and End Time: the open zone is sent, the closed one waits and expires, tz is no variable', async () => {
	const hour = new Date().getUTCHours();
	const window = `${pad(Math.max(0, hour - 1))}-${pad(Math.min(24, hour + 2))}`;
	const items: IDataObject[] = [
		{ phone: '+4917655000001', name: 'Ada', order: '#1', tz: 'UTC' },
		{ phone: '+4917655000002', name: 'Bo', order: '#2', tz: 'UTC' },
		{ phone: '+4917655000003', name: 'Cy', order: '#3', tz: 'Etc/GMT-12' },
	];
	const parameters = campaignCreateParameters(runner.business, positionalTemplate(runner.business).id, {
		variables: {
			variable: [
				{ name: '1', value: '={{ $json.name }}' },
				{ name: '2', value: '={{ $json.order }}' },
				{ name: 'tz', value: '={{ $json.tz }}' },
			],
		},
		additionalFields: { window, endAt: new Date(Date.now() + END_AFTER_MS).toISOString() },
	});
	const result = await runWorkflow(itemsThen(items, convoNode(parameters)), {
		credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } },
	});
	expect(result.errorOf('Convo')).toBeUndefined();
	const id = String(result.outputOf('Convo')[0].json.campaign_id ?? result.outputOf('Convo')[0].json.id);
	const get = async () =>
		(await (
			await fetch(`${base}/api/campaigns/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })
		).json()) as IDataObject & { counts: Record<string, number> };
	const sendsOf = async () =>
		(await templateSends(runner.sandbox)).filter((message) => message.to.startsWith('4917655'));
	const open = await waitFor(
		'the open zone to be sent',
		async () => {
			const campaign = await get();
			return campaign.counts.sent >= 2 ? campaign : undefined;
		},
		50_000,
		200,
	);
	// The closed zone waits: still pending once the open one is done, and nothing else arrived.
	expect(open).toMatchObject({ state: 'running', counts: { sent: 2, pending: 1 } });
	expect(await sendsOf()).toHaveLength(2);
	await moveCampaignClock(runner.context, id, END_AFTER_MS);
	const done = await waitFor(
		'the campaign to complete at its end',
		async () => {
			const campaign = await get();
			return campaign.state === 'completed' ? campaign : undefined;
		},
		30_000,
		200,
	);
	expect(done.counts).toMatchObject({ sent: 2, expired: 1, pending: 0 });
	expect(done).toMatchObject({
		window,
		zones: [
			{ zone: 'UTC', recipients: 2 },
			{ zone: 'Etc/GMT-12', recipients: 1 },
		],
	});
	const sends = await sendsOf();
	expect(sends.map((message) => message.to).sort()).toEqual(['4917655000001', '4917655000002']);
	expect(sends.map((message) => message.template?.variables)).toContainEqual({ 1: 'Ada', 2: '#1' });
});
