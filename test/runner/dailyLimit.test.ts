/**
 * The business's daily messaging limit (#36) with runner processes, a real Redis and the sandbox,
 * counted in the sandbox's own log. The sandbox enforces the channel's limit itself (250 distinct
 * customers per rolling 24 hours by its service time, a 400 `blocked send` beyond it), and the
 * runner is set to the same limit (`budget set 250`).
 *
 * Three campaigns of 200 over 400 phones, overlapping, on two numbers: A (phones 0-199, the first
 * number), then B (100-299, the second) and C (200-399, the first) once A is done. Two runner
 * processes; one is SIGKILLed while A sends. A counts 200 customers on day 1; B's first 100 phones
 * are counted already (A messaged them) and draw nothing; the 50 customers left to count go to B
 * and C, and the rest wait for the next day. Their dry runs, made before each starts, say 1, 2 and 2 days.
 *
 * The shared test clock: a day is crossed without waiting for it. The runners are stopped, the
 * sandbox's clock is moved DAY_JUMP_MS on (POST /__sandbox/clock), and the runners are started again
 * with RUNNER_TEST_CLOCK_OFFSET_MS = DAY_JUMP_MS, which the budget reads its span on (Redis's
 * clock plus the offset); the waiting campaigns' own clocks (windows, end) are moved the same
 * (moveCampaignClock). DAY_JUMP_MS is 24 h plus the margin (RUNNER_DAILY_LIMIT_MARGIN, 2 s here)
 * plus a second, so by both clocks every customer counted on day 1 has dropped out and nothing of day 2 is in a
 * 24-hour window with it unless the budget let it be.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
	campaignStatus,
	createCampaign,
	reconcileCampaign,
	retryNotSent,
	type DryRunAnswer,
} from '../../runner/src/core/campaigns';
import { countCustomer, setBudget, type BudgetCount } from '../../runner/src/core/audience';
import { createWebhook } from '../../runner/src/core/webhooks';
import type { RunnerEvent } from '../../packages/n8n-nodes-convo/nodes/shared/runner';
import {
	moveCampaignClock,
	positionalTemplate,
	report,
	runCli,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
	type SandboxMessage,
} from './support';

jest.setTimeout(180_000);

const LIMIT = 250;
const DAY_MS = 24 * 3_600_000;
const MARGIN_MS = 2000;
const DAY_JUMP_MS = DAY_MS + MARGIN_MS + 1000;

// Job lock and feeder watch shortened: the killed process's jobs and claims come back within seconds.
const runner = useRunnerUnderTest({
	RUNNER_CONCURRENCY: '10',
	RUNNER_JOB_LOCK: '3s',
	RUNNER_FEEDER_STALL: '3s',
	RUNNER_DAILY_LIMIT_MARGIN: `${MARGIN_MS}ms`,
	RUNNER_DAILY_LIMIT_RECHECK: '500ms',
	RUNNER_TOKEN: 'budget-test-token-0123456789',
});

/** A webhook receiver on loopback: every event it was delivered, answered 200. */
async function startReceiver(): Promise<{ url: string; events: RunnerEvent[]; close(): void }> {
	const events: RunnerEvent[] = [];
	const server = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', () => {
			events.push(JSON.parse(body) as RunnerEvent);
			response.writeHead(200).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
		events,
		close: () => server.close(),
	};
}

const admin = async (method: string, path: string, body?: unknown) => {
	const response = await fetch(`${runner.sandbox.baseUrl}/__sandbox/${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
	return response.json() as Promise<Record<string, unknown>>;
};

function csvOf(phones: string[]): string {
	const path = join(mkdtempSync(join(tmpdir(), 'convo-budget-')), 'recipients.csv');
	writeFileSync(path, `phone,1,2\n${phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`).join('\n')}\n`);
	return path;
}

const settings = (phones: string[], from: string) => ({
	templateId: positionalTemplate(runner.business).id,
	from,
	source: csvOf(phones),
	rate: 100,
});

async function dryRunOf(phones: string[], from: string): Promise<DryRunAnswer> {
	const answer = await createCampaign(runner.context, { ...settings(phones, from), dryRun: true });
	if (answer.kind !== 'dry_run') throw new Error('expected a dry run');
	return answer;
}

async function create(phones: string[], from: string, extra: Record<string, unknown> = {}): Promise<string> {
	const created = await createCampaign(runner.context, { ...settings(phones, from), ...extra });
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	return created.id;
}

const finished = (id: string) => async () => {
	const status = await campaignStatus(runner.context, id);
	return ['completed', 'failed', 'cancelled'].includes(status.state) ? status : undefined;
};

/** The most distinct customers any 24-hour window of the sandbox's service time holds. */
function busiestDay(sends: SandboxMessage[]): number {
	const sorted = sends.map((send) => ({ at: Date.parse(send.createdAt), to: send.to })).sort((a, b) => a.at - b.at);
	let most = 0;
	for (const [i, last] of sorted.entries()) {
		const inWindow = new Set(
			sorted
				.slice(0, i + 1)
				.filter((send) => send.at > last.at - DAY_MS)
				.map((s) => s.to),
		);
		most = Math.max(most, inWindow.size);
	}
	return most;
}

/** Days between a campaign's first and last message, by the sandbox's clock: 1 for the same day. */
const daysTaken = (sends: SandboxMessage[]) => {
	const times = sends.map((send) => Date.parse(send.createdAt));
	return Math.floor((Math.max(...times) - Math.min(...times)) / DAY_MS) + 1;
};

test('three campaigns to overlapping audiences on two numbers under a limit of 250, a runner killed mid-run, over two days: never more than 250 customers in 24 hours, every recipient once, the days the dry runs said', async () => {
	const [first, second] = runner.business.phoneNumbers;
	const everyone = writeRecipientsCsv(400, { seed: 36 }).phones;
	const audiences = { a: everyone.slice(0, 200), b: everyone.slice(100, 300), c: everyone.slice(200, 400) };
	await admin('PUT', `businesses/${runner.business.id}/daily-limit`, { limit: LIMIT });
	const set = await runCli(['budget', 'set', String(LIMIT), '--json'], runner.env);
	expect(set.code).toBe(0);
	expect(JSON.parse(set.stdout)).toMatchObject({ limit: LIMIT, source: 'set', used: 0, left: LIMIT });
	const refused = await runCli(['budget', 'set', '0'], runner.env);
	expect(refused.code).toBe(1);
	expect(refused.stderr).toContain('<limit> must be a whole number of customers from 1 to 1,000,000, or unlimited');

	const receiver = await startReceiver();
	await createWebhook(runner.context, { url: receiver.url, events: ['campaign.waiting'] });

	// Day 1: A alone, one of the two processes killed while it sends.
	const killed = runner.spawnWorker();
	runner.spawnWorker();
	const dryA = await dryRunOf(audiences.a, first);
	expect(dryA.estimate).toMatchObject({ days: 1, daily_limit: { limit: LIMIT, left: LIMIT, drawing: 200 } });
	const a = await create(audiences.a, first);
	await waitFor('60 of A sent', async () => (await templateSends(runner.sandbox)).length >= 60, 60_000, 20);
	await killed.kill('SIGKILL');
	await waitFor('A to finish', finished(a), 90_000);
	// A claim the killed process held is unknown: the service's records say whether it went.
	const reconciled = await reconcileCampaign(runner.context, a);
	if (reconciled.not_sent > 0) await retryNotSent(runner.context, a);
	expect((await waitFor('A to complete', finished(a), 60_000)).counts).toMatchObject({ sent: 200, unknown: 0 });

	// Still day 1: B and C; 50 customers left to count (fewer if the kill left one counted and never sent).
	const dryB = await dryRunOf(audiences.b, second);
	const dryC = await dryRunOf(audiences.c, first);
	expect(dryB.estimate).toMatchObject({ days: 2, daily_limit: { holding: 100, drawing: 100 } });
	expect(dryC.estimate).toMatchObject({ days: 2, daily_limit: { holding: 0, drawing: 200 } });
	expect(Date.parse(dryC.estimate.ends_at) - Date.now()).toBeGreaterThan(DAY_MS);
	const b = await create(audiences.b, second);
	const c = await create(audiences.c, first);
	const waiting = async (id: string) => (await campaignStatus(runner.context, id)).waiting ?? undefined;
	const waitB = await waitFor('B to wait for the daily limit', () => waiting(b), 60_000);
	await waitFor('C to wait for the daily limit', () => waiting(c), 60_000);
	expect(waitB.message).toMatch(/^waiting for the daily limit: the next customer can be counted at \d{4}-\d\d-\d\dT/);
	expect(Date.parse(waitB.next_at) - Date.now()).toBeGreaterThan(DAY_MS - 60_000);
	const shown = await runCli(['budget', 'show'], runner.env);
	expect(shown.stdout).toMatch(
		/daily messaging limit: 250 distinct customers .*; 250 customers counted, 0 left; the next customer can be counted at/,
	);
	// One campaign.waiting each, however many of its recipients and jobs were refused.
	const waitingEvents = (id: string) =>
		receiver.events.filter((event) => event.type === 'campaign.waiting' && event.data.id === id);
	await waitFor('the waiting events', async () => waitingEvents(b).length > 0 && waitingEvents(c).length > 0, 30_000);
	expect(waitingEvents(b)[0].data).toMatchObject({ state: 'running', waiting: { reason: 'daily_limit' } });
	const dayOne = await templateSends(runner.sandbox);
	expect(new Set(dayOne.map((send) => send.to)).size).toBeLessThanOrEqual(LIMIT);

	// The next day, by both clocks.
	await Promise.all(runner.processes.map((process) => process.kill('SIGKILL')));
	await admin('POST', 'clock', { advanceMs: DAY_JUMP_MS });
	for (const id of [b, c]) await moveCampaignClock(runner.context, id, DAY_JUMP_MS);
	const nextDay = { RUNNER_TEST_CLOCK_OFFSET_MS: String(DAY_JUMP_MS) };
	runner.spawnWorker(nextDay);
	runner.spawnWorker(nextDay);
	for (const id of [b, c]) {
		await waitFor(`campaign ${id} to finish`, finished(id), 90_000);
		const result = await reconcileCampaign(runner.context, id);
		if (result.not_sent > 0) await retryNotSent(runner.context, id);
		const done = await waitFor(`campaign ${id} to complete`, finished(id), 60_000);
		expect(done).toMatchObject({ state: 'completed', waiting: null, counts: { sent: 200, failed: 0, unknown: 0 } });
	}

	// Counted in the sandbox's log: each campaign's recipients (a number and a phone) once, no 24 hours over the limit.
	const sends = (await templateSends(runner.sandbox)).filter((send) => everyone.includes(send.to));
	const of = (phones: string[], from: string) => sends.filter((send) => send.from === from && phones.includes(send.to));
	const perCampaign = [
		{ dry: dryA, sends: of(audiences.a, first), phones: audiences.a },
		{ dry: dryB, sends: of(audiences.b, second), phones: audiences.b },
		{ dry: dryC, sends: of(audiences.c, first), phones: audiences.c },
	];
	for (const campaign of perCampaign) {
		expect(campaign.sends.map((send) => send.to).sort()).toEqual([...campaign.phones].sort());
		expect(daysTaken(campaign.sends)).toBe(campaign.dry.estimate.days);
	}
	expect(sends).toHaveLength(600);
	expect(busiestDay(sends)).toBeLessThanOrEqual(LIMIT);
	expect([a, b, c].map((id) => waitingEvents(id).length)).toEqual([0, 1, 1]);
	receiver.close();
	// The sandbox refused nothing: every recipient is sent, none failed, and its own count is within the limit.
	for (const id of [a, b, c])
		expect((await report(runner.context, id)).filter((row) => row.outcome !== 'sent')).toEqual([]);
	const view = (await admin('GET', 'refusals')) as { dailyLimits: Record<string, { limit: number; used: number }> };
	expect(view.dailyLimits[runner.business.id]).toMatchObject({ limit: LIMIT });
	expect(view.dailyLimits[runner.business.id].used).toBeLessThanOrEqual(LIMIT);
});

test('the API and /metrics: the limit set, shown with the customers counted and left, unlimited, cleared; a wrong one names the field and the rule', async () => {
	const token = runner.env.RUNNER_TOKEN as string;
	await Promise.all(runner.processes.map((process) => process.kill('SIGKILL')));
	const base = await startApi(runner, { RUNNER_DAILY_LIMIT: '2000' });
	const call = async (method: string, path: string, body?: unknown) => {
		const response = await fetch(`${base}${path}`, {
			method,
			headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
			body: body ? JSON.stringify(body) : undefined,
		});
		const text = await response.text();
		return {
			status: response.status,
			json: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {},
			text,
		};
	};
	// The customers counted in the test before (a day on) are not seen by this process's clock: it has no offset.
	expect((await call('PUT', '/api/budget', { limit: 10_000 })).json).toMatchObject({
		limit: 10_000,
		source: 'set',
		left: expect.any(Number),
		span_ms: DAY_MS + MARGIN_MS,
	});
	const shown = (await call('GET', '/api/budget')).json as { used: number; left: number };
	expect(shown.used + shown.left).toBe(10_000);
	const metrics = (await call('GET', '/metrics')).text;
	expect(metrics).toMatch(/^convo_runner_daily_limit 10000$/m);
	expect(metrics).toContain(`convo_runner_daily_limit_used ${shown.used}`);
	expect(metrics).toContain(`convo_runner_daily_limit_left ${shown.left}`);
	expect(metrics).toMatch(/^convo_runner_campaigns_waiting_daily_limit 0$/m);
	expect(await call('PUT', '/api/budget', { limit: 0 })).toMatchObject({
		status: 400,
		json: {
			field: 'limit',
			message: 'limit must be a whole number of customers from 1 to 1,000,000, or unlimited',
		},
	});
	expect((await call('PUT', '/api/budget', { limit: 'unlimited' })).json).toMatchObject({
		limit: 'unlimited',
		used: 0,
		left: null,
	});
	expect(await runner.context.redis.exists(runner.context.keys.budget.customers)).toBe(0);
	// A limit is 1 or more: 0 says unlimited.
	expect((await call('GET', '/metrics')).text).toMatch(/^convo_runner_daily_limit 0$/m);
	expect((await call('DELETE', '/api/budget')).json).toMatchObject({ limit: 2000, source: 'default' });
});

test('a campaign waiting for the daily limit still ends at its end (the rest expired), and a test send is refused past the limit', async () => {
	// The API's process of the test before is the worker here; the counted customers were dropped when it set unlimited.
	await setBudget(runner.context, 1);
	const [first] = runner.business.phoneNumbers;
	const phones = writeRecipientsCsv(4, { seed: 37 }).phones;
	const endAt = new Date(Date.now() + 6000).toISOString();
	const id = await create(phones.slice(0, 3), first, { endAt });
	const waiting = await waitFor(
		'the campaign to wait',
		async () => (await campaignStatus(runner.context, id)).waiting ?? undefined,
		30_000,
	);
	expect(waiting.reason).toBe('daily_limit');
	// A dry run says the test would be refused, in the refusal's words, and counts nothing.
	const testing = { ...settings(phones.slice(0, 1), first), testTo: `+${phones[3]}` };
	const dry = await createCampaign(runner.context, { ...testing, dryRun: true });
	const held = dry.kind === 'dry_run' ? dry.test_send?.held : undefined;
	expect(held).toMatch(/^the business's daily messaging limit is reached \(the next customer can be counted at \d{4}-/);
	await expect(createCampaign(runner.context, testing)).rejects.toThrow(`${phones[3]}: ${held}; nothing was started`);
	const done = await waitFor('the campaign to end', finished(id), 60_000);
	expect(done).toMatchObject({ state: 'completed', waiting: null, counts: { sent: 1, expired: 2, pending: 0 } });
	const received = (await templateSends(runner.sandbox)).filter((send) => phones.includes(send.to));
	expect(received).toHaveLength(1);
	// The core's door for other sends (a workflow's): the phone sent is counted already, another is refused.
	const again: BudgetCount = await countCustomer(runner.context, `+${received[0].to}`);
	expect(again).toEqual({ counted: true, isNew: false });
	// Counted already, a test phone draws nothing more: a dry run testing it finds no rule against it.
	const countedTest = await createCampaign(runner.context, {
		...settings(phones.slice(0, 1), first),
		testTo: `+${received[0].to}`,
		dryRun: true,
	});
	expect(countedTest.kind === 'dry_run' && countedTest.test_send).toEqual({
		to: received[0].to,
		sent: false,
		note: expect.stringMatching(/sends it first/),
	});
	expect(await countCustomer(runner.context, `+${phones[3]}`)).toMatchObject({ counted: false });
	await setBudget(runner.context, 'unlimited');
});
