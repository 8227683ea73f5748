/**
 * Delivery truth end to end (#22, the first "Done when"): a 5,000-recipient campaign against the
 * sandbox set to 90% delivered, 60% read, 5% failed for two reasons and 10% replies, tracked by one
 * `convo-runner start` through the messaging API (A1) on a short schedule, replies arriving as
 * message_created deliveries at the runner's events endpoint (registered at the sandbox as an
 * operator registers it). Once the funnel is settled, what the sandbox drew is what every surface
 * says: the API, `campaign status --json`, `/metrics`, the report message by message, the console
 * in Chromium (the console guide's pictures of the list and the campaign's page, nothing refused by
 * the CSP) and the Convo node's
 * Campaign → Get through n8n-core.
 */
import type { Browser } from 'playwright-core';

import { getCampaign } from '../../runner/src/core/campaigns';
import { EVENTS_PATH } from '../../runner/src/http/eventRoutes';
import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { consolePage, guideShot, launchChromium } from './consoleSupport';
import {
	apiCaller,
	deliveryOutcomes,
	positionalTemplate,
	runCli,
	setDelivery,
	startApi,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
	type DeliveryOutcome,
} from './support';

jest.setTimeout(300_000);

const TOKEN = 'funnel-token-0123456789abcdef';
const HEADER = 'X-Convo-Events';
const SECRET = 'funnel-events-secret-7c2e91b4';
const COUNT = 5000;
const SEND_RATE = 1000;
const TRACKING_RATE = 1000;
const REASONS = ['Number is not on WhatsApp', 'Blocked by the recipient'];
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_EVENTS_HEADER_NAME: HEADER,
	RUNNER_EVENTS_HEADER_VALUE: SECRET,
	// Every step happens within 750 ms of the send, so the first check (+1 s) sees each final state
	// and the second (+2.5 s) closes the window of the ones that stay delivered or sent.
	RUNNER_TRACKING_SCHEDULE: '1s,2500ms',
	RUNNER_TRACKING_RATE: String(TRACKING_RATE),
});
let base = '';
const call = apiCaller(() => base, TOKEN);

interface Funnel {
	audience: number;
	accepted: number;
	sent: number;
	delivered: number;
	read: number;
	replied: number;
	failed_delivery: number;
	in_flight: number;
	failed_reasons: { reason: string; count: number }[];
	rates: { delivered: number; read: number; replied: number; failed_delivery: number };
	tracking: string;
	settled: boolean;
}
interface Row {
	phone: string;
	outcome: string;
	message_id: string;
	delivery: string;
	delivered_at: string | null;
	read_at: string | null;
	replied_at: string | null;
	delivery_error: string | null;
}

const round3 = (share: number) => Math.round(share * 1000) / 1000;

/** The funnel the sandbox's draw implies, in the API's shape. */
function expectedFunnel(outcomes: DeliveryOutcome[]): Funnel {
	const sent = outcomes.length;
	const delivered = outcomes.filter((o) => o.outcome === 'delivered' || o.outcome === 'read').length;
	const read = outcomes.filter((o) => o.outcome === 'read').length;
	const replied = outcomes.filter((o) => o.replied_at).length;
	const failed = outcomes.filter((o) => o.outcome === 'failed');
	const failedReasons = REASONS.map((reason) => ({
		reason,
		count: failed.filter((o) => o.reason === reason).length,
	})).sort((a, b) => b.count - a.count);
	return {
		audience: COUNT,
		accepted: COUNT,
		sent,
		delivered,
		read,
		replied,
		failed_delivery: failed.length,
		in_flight: outcomes.filter((o) => o.outcome === 'sent').length,
		failed_reasons: failedReasons,
		rates: {
			delivered: round3(delivered / sent),
			read: round3(read / sent),
			replied: round3(replied / sent),
			failed_delivery: round3(failed.length / sent),
		},
		tracking: 'messaging_api',
		settled: true,
	};
}

let browser: Browser | undefined;
afterAll(async () => {
	await browser?.close();
});

test('a 5,000-recipient campaign: the funnel in the API, CLI, metrics, report (message by message), console and the node equals what the sandbox drew', async () => {
	const started = Date.now();
	const messagingApi = { CONVO_BASE_URL: runner.sandbox.baseUrl, CONVO_ACCESS_TOKEN: runner.business.accessToken };
	const env = { ...runner.env, ...messagingApi };
	base = await startApi(runner, messagingApi);
	// The runner's events endpoint registered at the service (the sandbox) with its header.
	const registered = await fetch(`${runner.sandbox.baseUrl}/__sandbox/webhooks`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({
			business: runner.business.id,
			url: `${base}${EVENTS_PATH}`,
			method: 'POST',
			headers: { [HEADER]: SECRET },
		}),
	});
	expect(registered.status).toBeLessThan(300);
	await setDelivery(runner.sandbox, {
		seed: 'funnel-22',
		delivered: 0.9,
		read: 0.6,
		failed: [
			{ share: 0.03, reason: REASONS[0] },
			{ share: 0.02, reason: REASONS[1] },
		],
		replied: 0.1,
		reply_texts: ['Yes please', 'Stop'],
		delays_ms: { sent: 100, delivered: 250, read: 500, failed: 300, reply: 750 },
	});

	const { path } = writeRecipientsCsv(COUNT, { seed: 22 });
	const created = await runCli(
		[
			'campaign',
			'create',
			'--template',
			positionalTemplate(runner.business).id,
			'--from',
			`+${runner.business.phoneNumbers[0]}`,
			'--recipients',
			path,
			'--rate',
			String(SEND_RATE),
			'--json',
		],
		env,
	);
	expect(created.code).toBe(0);
	const id = (JSON.parse(created.stdout) as { id: string }).id;

	// Settled, and every reply the sandbox sent has been received (replies come as events, not checks).
	// The campaign's state is a cheap look while it sends; the sandbox's outcomes are read once it is done.
	await waitFor(
		'the campaign to complete',
		async () => (await getCampaign(runner.context, id))?.state === 'completed',
		120_000,
		250,
	);
	const outcomes = await waitFor(
		'the sandbox to accept every send',
		async () => {
			const all = await deliveryOutcomes(runner.sandbox);
			return all.length === COUNT ? all : undefined;
		},
		30_000,
		1000,
	);
	const expected = expectedFunnel(outcomes);
	const funnel = await waitFor(
		'the funnel to settle with every reply',
		async () => {
			const f = (await call('GET', `/api/campaigns/${id}`)).json.funnel as Funnel | undefined;
			return f?.settled && f.replied === expected.replied ? f : undefined;
		},
		150_000,
		250,
	);
	const settledAfter = Date.now() - started;
	// The process starts the checks below read, begun together (each costs seconds of CPU).
	const statusAnswer = runCli(['campaign', 'status', id, '--json'], env);
	const reportAnswer = runCli(['campaign', 'report', id, '--json'], env);
	const launched = launchChromium().then((chromium) => (browser = chromium));
	launched.catch(() => undefined); // awaited below, where its failure fails the test

	// The draw is what was asked (each share within about a point over 5,000).
	const share = (n: number) => n / COUNT;
	expect(Math.abs(share(expected.delivered) - 0.9)).toBeLessThan(0.015);
	expect(Math.abs(share(expected.read) - 0.6)).toBeLessThan(0.02);
	expect(Math.abs(share(expected.failed_delivery) - 0.05)).toBeLessThan(0.01);
	expect(Math.abs(share(expected.replied) - 0.1)).toBeLessThan(0.015);
	expect(expected.failed_reasons.every((r) => r.count > 0)).toBe(true);

	// The API (the campaign and its list item) and the CLI.
	expect(funnel).toEqual(expected);
	expect(
		(await call('GET', '/api/campaigns')).json.items.find((item: { id: string }) => item.id === id).funnel,
	).toEqual(expected);
	const status = await statusAnswer;
	expect(status.code).toBe(0);
	expect(JSON.parse(status.stdout).funnel).toEqual(expected);

	// /metrics: every stage and each failure reason.
	const metrics = (await call('GET', '/metrics')).text;
	const number = runner.business.phoneNumbers[0];
	for (const stage of [
		'audience',
		'accepted',
		'sent',
		'delivered',
		'read',
		'replied',
		'failed_delivery',
		'in_flight',
	] as const) {
		expect(metrics).toContain(
			`convo_runner_campaign_funnel{campaign="${id}",number="${number}",stage="${stage}"} ${expected[stage]}\n`,
		);
	}
	for (const { reason, count } of expected.failed_reasons)
		expect(metrics).toContain(
			`convo_runner_campaign_failed_delivery{campaign="${id}",number="${number}",reason="${reason}"} ${count}\n`,
		);

	// The report, message by message: each row as the sandbox drew its message.
	const rows = (await call('GET', `/api/campaigns/${id}/report?format=json`)).json as Row[];
	expect(rows).toHaveLength(COUNT);
	const byId = new Map(outcomes.map((o) => [o.message_id, o]));
	const mismatches: unknown[] = [];
	for (const row of rows) {
		const drawn = byId.get(row.message_id);
		const seen = {
			phone: row.phone,
			delivery: row.delivery,
			delivered: row.delivered_at !== null,
			read: row.read_at !== null,
			replied_at: row.replied_at && Date.parse(row.replied_at),
			error: row.delivery_error,
		};
		const want = {
			phone: drawn?.to,
			delivery: drawn?.outcome,
			delivered: drawn?.outcome === 'delivered' || drawn?.outcome === 'read',
			read: drawn?.outcome === 'read',
			replied_at: drawn?.replied_at ? Date.parse(drawn.replied_at) : null,
			error: drawn?.reason ?? null,
		};
		if (JSON.stringify(seen) !== JSON.stringify(want)) mismatches.push({ message_id: row.message_id, seen, want });
		// A check sees a step after it happened, never before.
		if (drawn?.delivered_at && row.delivered_at)
			expect(Date.parse(row.delivered_at)).toBeGreaterThanOrEqual(Date.parse(drawn.delivered_at));
		if (drawn?.read_at && row.read_at)
			expect(Date.parse(row.read_at)).toBeGreaterThanOrEqual(Date.parse(drawn.read_at));
	}
	expect(mismatches.slice(0, 5)).toEqual([]);
	// The CLI's report is the same rows.
	const cliReport = await reportAnswer;
	expect(JSON.parse(cliReport.stdout)).toEqual(rows);

	// The Convo node's Campaign → Get returns it.
	const result = await runWorkflow(
		itemsThen([{}], convoNode({ resource: 'campaign', operation: 'get', campaignId: id })),
		{ credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } } },
	);
	expect(result.errorOf('Convo')).toBeUndefined();
	expect(result.outputOf('Convo')[0].json.funnel).toEqual(expected);

	// The console shows it, under its CSP.
	const { page, violations } = await consolePage(await launched, base, TOKEN, { width: 1300, height: 1100 });
	const pct = (rate: number) => `${(100 * rate).toFixed(1)}%`;
	const listRow = page.getByTestId('campaign-row').filter({ hasText: id });
	expect(await listRow.getByTestId('list-delivered').textContent()).toBe(
		`${pct(expected.rates.delivered)} ${expected.delivered}`,
	);
	expect(await listRow.getByTestId('list-read').textContent()).toBe(`${pct(expected.rates.read)} ${expected.read}`);
	await guideShot(page, 'campaigns');

	await page.goto(`${base}/#/campaigns/${id}`);
	await page.getByTestId('funnel').waitFor();
	const text = async (testId: string) => (await page.getByTestId(testId).textContent())?.trim();
	for (const stage of ['audience', 'accepted', 'sent', 'delivered', 'read', 'replied'] as const)
		expect({ stage, count: await text(`funnel-${stage}-count`) }).toEqual({ stage, count: String(expected[stage]) });
	for (const stage of ['delivered', 'read', 'replied'] as const)
		expect(await text(`funnel-${stage}-rate`)).toBe(`${pct(expected.rates[stage])} of sent`);
	expect(await text('funnel-sent-rate')).toBe('100.0% of accepted');
	expect(await text('funnel-failed-count')).toBe(String(expected.failed_delivery));
	expect(await text('funnel-failed-rate')).toBe(`(${pct(expected.rates.failed_delivery)} of sent)`);
	const reasons = await page
		.getByTestId('funnel-reason')
		.evaluateAll((items) =>
			items.map((item) => [
				item.querySelector('[data-testid="funnel-reason-text"]')?.textContent,
				Number(item.querySelector('[data-testid="funnel-reason-count"]')?.textContent),
			]),
		);
	expect(reasons).toEqual(expected.failed_reasons.map((r) => [r.reason, r.count]));
	expect(await text('funnel-in-flight')).toBe(String(expected.in_flight));
	expect(await page.getByTestId('funnel-tracking').getAttribute('data-mode')).toBe('messaging_api');
	expect(await text('funnel-settled')).toContain('Settled');
	// The bars are drawn (widths set through the CSSOM, which the CSP allows): delivered is its share of the audience.
	const deliveredWidth = await page
		.getByTestId('funnel-delivered')
		.locator('.fill')
		.evaluate((node) => (node as unknown as { style: { width: string } }).style.width);
	expect(parseFloat(deliveredWidth)).toBeCloseTo((100 * expected.delivered) / COUNT, 5);
	// A refresh (every 2 s) draws the funnel anew, with the same figures.
	const readCount = await page.getByTestId('funnel-read-count').elementHandle();
	await page.waitForFunction((node) => !(node as unknown as { isConnected: boolean }).isConnected, readCount, {
		timeout: 10_000,
	});
	expect(await text('funnel-read-count')).toBe(String(expected.read));
	await guideShot(page, 'campaign');
	expect(violations).toEqual([]);

	// The figures of this run, for the record.
	const drawn = {
		delivered_only: expected.delivered - expected.read,
		read: expected.read,
		failed: expected.failed_reasons,
		stays_sent: expected.in_flight,
		replied: expected.replied,
	};
	process.stdout.write(
		`deliveryFunnel: ${JSON.stringify(drawn)}; settled after ${settledAfter} ms, whole test ${Date.now() - started} ms\n`,
	);
});
