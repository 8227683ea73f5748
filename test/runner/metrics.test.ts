/**
 * /metrics as Prometheus scrapes it, against a running `convo-runner start` with real Redis and the
 * sandbox: after real sends BullMQ's completed counter has moved, a webhook delivery that fails for
 * good moves the failed one, and `promtool check metrics` finds the exposition clean.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import parsePrometheusTextFormat from 'parse-prometheus-text-format';

import { apiCaller, positionalTemplate, startApi, templateSends, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(180_000);

const TOKEN = 'metrics-token-0123456789abcdef';
// One attempt per delivery: a receiver that answers 500 fails its job for good at once.
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_WEBHOOK_ATTEMPTS: '1' });
let base = '';
const call = apiCaller(() => base, TOKEN);
let closeReceiver = async () => {};

/** A webhook receiver that refuses every delivery; how many it was sent. */
async function startRefusingReceiver(): Promise<{ url: string; received: () => number }> {
	let received = 0;
	const server = createServer((request, response) => {
		request.resume();
		request.on('end', () => {
			received++;
			response.writeHead(500).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	closeReceiver = () => new Promise((resolve) => server.close(() => resolve()));
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received: () => received };
}

beforeAll(async () => {
	base = await startApi(runner);
});
afterAll(async () => {
	await closeReceiver();
});

type Family = { name: string; metrics: Array<{ labels?: Record<string, string>; value?: string }> };

async function scrape(): Promise<{ text: string; families: Family[] }> {
	const text = (await call('GET', '/metrics')).text;
	return { text, families: parsePrometheusTextFormat(text) as Family[] };
}

/** The sum of a family's samples whose queue label starts with `queue`. */
const total = (families: Family[], name: string, queue: string) =>
	(families.find((family) => family.name === name)?.metrics ?? [])
		.filter((m) => m.labels?.queue?.startsWith(queue))
		.reduce((sum, m) => sum + Number(m.value), 0);

/** A campaign created through the API, completed; its phones. */
async function sendCampaign(count: number, seed: number): Promise<string[]> {
	const phones = Array.from({ length: count }, (_, i) => `4917${seed}${String(i).padStart(7, '0')}`);
	const created = await call('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		rate: 100,
		recipients: phones.map((phone) => ({ phone, 1: 'Ana', 2: 'order' })),
	});
	expect(created.status).toBe(201);
	await waitFor(
		'the campaign to complete',
		async () => (await call('GET', `/api/campaigns/${created.json.id}`)).json.state === 'completed',
		120_000,
	);
	expect((await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to))).toHaveLength(count);
	return phones;
}

test('after real sends the completed counter has moved, a delivery that failed for good moves the failed one, and promtool finds the exposition clean', async () => {
	await sendCampaign(120, 1);
	// Sends go in runs of recipients, each a job of the number's send queue.
	const sent = await waitFor(
		'completed send jobs counted',
		async () => {
			const { families } = await scrape();
			return total(families, 'bullmq_job_completed_total', 'send-') > 0 && families;
		},
		30_000,
	);
	expect(total(sent, 'bullmq_job_failed_total', '')).toBe(0);

	// The next campaign's campaign.finished goes to a receiver that refuses it: its delivery job fails.
	const receiver = await startRefusingReceiver();
	expect((await call('POST', '/api/webhooks', { url: receiver.url, events: ['campaign.finished'] })).status).toBe(201);
	await sendCampaign(2, 2);
	await waitFor('the delivery to reach the receiver', async () => receiver.received() > 0, 60_000);
	const { text, families } = await waitFor(
		'the failed delivery counted',
		async () => {
			const scraped = await scrape();
			return total(scraped.families, 'bullmq_job_failed_total', 'events-') >= receiver.received() && scraped;
		},
		30_000,
	);
	// One attempt each: every delivery the receiver refused is one failed job (the first campaign's event may be one of them).
	expect(total(families, 'bullmq_job_failed_total', 'events-')).toBe(receiver.received());
	expect(total(families, 'bullmq_job_completed_total', 'send-')).toBeGreaterThan(
		total(sent, 'bullmq_job_completed_total', 'send-'),
	);
	// Jobs by state: a gauge per queue and state, under a name Prometheus takes as one.
	expect(families.find((family) => family.name === 'bullmq_jobs')?.metrics.length).toBeGreaterThan(0);
	expect(families.some((family) => family.name === 'bullmq_job_count')).toBe(false);

	const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
	expect({ status: checked.status, stdout: checked.stdout, stderr: checked.stderr }).toEqual({
		status: 0,
		stdout: '',
		stderr: '',
	});
});

test("a campaign's state and why it paused, and the runner processes alive by role, as the alerts read them", async () => {
	const created = await call('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		rate: 1,
		recipients: Array.from({ length: 50 }, (_, i) => ({ phone: `49173${String(i).padStart(7, '0')}`, 1: 'A', 2: 'o' })),
	});
	expect(created.status).toBe(201);
	const id = created.json.id as string;
	expect((await call('POST', `/api/campaigns/${id}/pause`)).status).toBe(200);
	const { families, text } = await scrape();
	const samples = (name: string) => families.find((family) => family.name === name)?.metrics ?? [];
	expect(samples('convo_runner_campaign_state').filter((m) => m.labels?.campaign === id)).toEqual([
		{ labels: { campaign: id, number: runner.business.phoneNumbers[0], state: 'paused' }, value: '1' },
	]);
	expect(samples('convo_runner_campaign_paused').filter((m) => m.labels?.campaign === id)).toEqual([
		{ labels: { campaign: id, number: runner.business.phoneNumbers[0], reason: 'operator' }, value: '1' },
	]);
	// A completed campaign of the test before is reported as such, and not as paused.
	expect(samples('convo_runner_campaign_state').some((m) => m.labels?.state === 'completed' && m.value === '1')).toBe(
		true,
	);
	expect(samples('convo_runner_campaign_paused').map((m) => m.labels?.campaign)).toEqual([id]);
	// The start process this API runs in beats too: at least one process alive.
	const processes = samples('convo_runner_processes');
	expect(processes.map((m) => m.labels?.role).sort()).toEqual(['start', 'worker']);
	expect(processes.reduce((sum, m) => sum + Number(m.value), 0)).toBeGreaterThan(0);
	expect(spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' }).status).toBe(0);
	expect((await call('POST', `/api/campaigns/${id}/cancel`)).status).toBe(200);
});
