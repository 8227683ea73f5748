/**
 * The console's actions in a real browser (Debian's Chromium through playwright-core) against a
 * running `convo-runner start`: a campaign created by uploading a CSV through the form runs to
 * completion (its rejected rows shown with their lines, its reasons grouped without placeholders);
 * one recipient found by phone; the rate changed; cancel asks in the page with the count, and a
 * cancelled campaign looks unlike a completed one; retry not-sent re-sends only those; a finished
 * campaign is deleted after the page asks; an empty
 * chart says it waits for data; the queue board links back; nothing is refused by the CSP.
 * Screenshots go to .tmp/ (CI artifacts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Browser, Page } from 'playwright-core';

import { listSchedules } from '../../runner/src/core/campaigns';
import { consolePage, launchChromium, SHOTS } from './consoleSupport';
import { positionalTemplate, sendsByPhone, startApi, templateSends, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(240_000);

const TOKEN = 'console-actions-token-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';
let browser: Browser;
let page: Page;
/** What the browser refused under the server's CSP, over every view these tests open. */
let violations: string[] = [];

/**
 * The service as the runner sees it: the sandbox, except that after `refuseAfter` sends it answers
 * 404 (the template gone), which fails a campaign and leaves its recipients not sent (the
 * sandbox's own faults answer 5xx, which end as failed, not as not sent; a refused key or template
 * pauses the campaign instead, its recipients pending).
 */
const service = { refuseAfter: Infinity, forwarded: 0 };
let closeProxy = async () => {};

async function startRefusingProxy(target: string): Promise<string> {
	const server = createServer((incoming, outgoing) => {
		if (incoming.url?.includes('/send-template')) {
			if (service.forwarded >= service.refuseAfter) {
				incoming.resume();
				outgoing
					.writeHead(404, { 'content-type': 'application/json' })
					.end(JSON.stringify({ message: 'template not found' }));
				return;
			}
			service.forwarded++;
		}
		const upstream = httpRequest(
			new URL(incoming.url ?? '/', target),
			{ method: incoming.method, headers: incoming.headers },
			(answer) => {
				outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(outgoing);
			},
		);
		upstream.on('error', () => outgoing.destroy());
		incoming.pipe(upstream);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	closeProxy = async () => {
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	};
	return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
	const proxy = await startRefusingProxy(runner.sandbox.baseUrl);
	base = await startApi(runner, { CONVO_EXTERNAL_URL: `${proxy}/api/external/v2` });
	browser = await launchChromium();
	({ page, violations } = await consolePage(browser, base, TOKEN, { width: 1300, height: 1000 }));
});
afterAll(async () => {
	await browser?.close();
	await closeProxy();
});

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	return (await response.json()) as T;
}
interface Campaign {
	id: string;
	state: string;
	rate_limit: number;
	counts: Record<string, number>;
}
const phoneOf = (block: number, i: number) => `491719${block}${String(i).padStart(5, '0')}`;
async function createByApi(phones: string[], extra: Record<string, unknown> = {}): Promise<string> {
	const answer = await api<{ id: string }>('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		rate: 10,
		recipients: phones.map((phone, i) => ({ phone, 1: `R${i}`, 2: `#${i}` })),
		...extra,
	});
	return answer.id;
}
const stateOf = async (id: string) => (await api<Campaign>('GET', `/api/campaigns/${id}`)).state;
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });

let completedId = '';

test('a CSV uploaded through New campaign runs to completion; its rejected rows are shown with their lines, its reasons grouped as they read', async () => {
	const phones = Array.from({ length: 15 }, (_, i) => phoneOf(1, i));
	// Two repeats of different phones (lines 17, 18 repeat lines 2, 3) and a phone too short (line 19).
	const lines = [
		'phone,1,2',
		...phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`),
		`${phones[0]},again,0`,
		`${phones[1]},again,1`,
		'12345,short,2',
	];
	const dir = mkdtempSync(join(tmpdir(), 'console-upload-'));
	writeFileSync(join(dir, 'recipients.csv'), `${lines.join('\n')}\n`);

	await page.getByTestId('new-campaign').click();
	await page.getByTestId('create-form').waitFor();
	await page.getByTestId('create-name').fill('November newsletter');
	await page.getByTestId('create-file').setInputFiles(join(dir, 'recipients.csv'));
	await page.getByTestId('create-template').fill(positionalTemplate(runner.business).id);
	await page.getByTestId('create-from').fill(runner.business.phoneNumbers[0]);
	await page.getByTestId('create-rate').fill('20');
	await shot('create-form');
	await page.getByTestId('create-submit').click();

	await page.waitForURL(/#\/campaigns\/c/);
	completedId = /#\/campaigns\/(\S+)$/.exec(page.url())?.[1] ?? '';
	const summary = page.getByTestId('create-summary');
	expect(await summary.textContent()).toContain('15 recipients accepted, 3 rejected');
	const rejections = await page.getByTestId('create-rejections').locator('tbody tr').allTextContents();
	expect(rejections).toEqual([
		expect.stringMatching(/^17.*already in this campaign \(line 2\)/),
		expect.stringMatching(/^18.*already in this campaign \(line 3\)/),
		expect.stringMatching(/^19.*12345.*digits/),
	]);

	await waitFor(
		'the uploaded campaign to complete',
		async () => (await page.getByTestId('state').textContent()) === 'completed' || undefined,
		60_000,
		250,
	);
	expect(await page.getByTestId('count-sent').textContent()).toBe('15');
	const sends = sendsByPhone((await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to)));
	expect([...sends.values()].map((list) => list.length)).toEqual(phones.map(() => 1));
	// The template by the name the service's answers gave it, its id beside it on one line.
	const template = positionalTemplate(runner.business);
	expect((await api<Campaign & { template_name: string }>('GET', `/api/campaigns/${completedId}`)).template_name).toBe(
		template.name,
	);
	await waitFor(
		'the page to name the template',
		async () => (await page.getByTestId('template-name').count()) > 0 || undefined,
		10_000,
		100,
	);
	expect(await page.getByTestId('template-name').textContent()).toBe(template.name);
	expect(await page.getByTestId('template-id').textContent()).toBe(template.id);
	const idLines = await page
		.getByTestId('template-id')
		.evaluate((node) => (node as unknown as { getClientRects(): { length: number } }).getClientRects().length);
	expect(idLines).toBe(1);

	// The two repeats are one group, shown by a real reason as an example; no number turned into a letter.
	const reasons = await page.getByTestId('reason-row').allTextContents();
	expect(reasons).toContain('rejectede.g. phone is already in this campaign (line 2)2');
	expect(reasons.join('\n')).not.toMatch(/\bN\b/);
	await shot('campaign-created');
});

test('a cron schedule is created from a URL through the same form; a form with neither a file nor a URL says so', async () => {
	const csv = createServer((_request, response) =>
		response.writeHead(200, { 'content-type': 'text/csv' }).end(`phone,1,2\n${phoneOf(4, 0)},Ana,1\n`),
	);
	await new Promise<void>((resolve) => csv.listen(0, '127.0.0.1', resolve));
	const url = `http://127.0.0.1:${(csv.address() as AddressInfo).port}/weekly.csv`;
	try {
		await page.goto(`${base}/#/new`);
		await page.getByTestId('create-template').fill(positionalTemplate(runner.business).id);
		await page.getByTestId('create-from').fill(runner.business.phoneNumbers[0]);
		await page.getByTestId('create-submit').click();
		expect(await page.getByTestId('create-error').textContent()).toBe(
			'Recipients: choose a CSV file or give its URL (one of them).',
		);

		await page.getByTestId('create-source-url').fill(url);
		await page.getByTestId('create-cron').fill('0 9 * * 1');
		await page.getByTestId('create-tz').fill('Europe/Berlin');
		await page.getByTestId('create-submit').click();
		await page.getByTestId('create-schedule').waitFor();
		const text = (await page.getByTestId('create-schedule').textContent()) ?? '';
		expect(text).toMatch(
			/^Schedule \S+ created: 0 9 \* \* 1 \(Europe\/Berlin\); each firing is a campaign of its own in the list\.$/,
		);
		const schedules = await listSchedules(runner.context);
		expect(schedules.map((schedule) => ({ id: schedule.id, cron: schedule.cron, tz: schedule.tz }))).toEqual([
			{ id: /^Schedule (\S+) /.exec(text)?.[1], cron: '0 9 * * 1', tz: 'Europe/Berlin' },
		]);
		await shot('create-schedule');
	} finally {
		csv.closeAllConnections();
		await new Promise((resolve) => csv.close(resolve));
	}
});

test('a recipient is found by phone as the operator types it; a phone not in the campaign says so', async () => {
	await page.goto(`${base}/#/campaigns/${completedId}`);
	const phone = phoneOf(1, 4);
	await page
		.getByTestId('find-phone')
		.fill(`+${phone.slice(0, 2)} ${phone.slice(2, 5)} ${phone.slice(5, 7)}-${phone.slice(7)}`);
	await page.getByTestId('find-submit').click();
	await page.getByTestId('recipient-outcome').waitFor();
	expect(await page.getByTestId('recipient-phone').textContent()).toBe(phoneOf(1, 4));
	expect(await page.getByTestId('recipient-outcome').textContent()).toBe('sent');
	expect(await page.getByTestId('recipient-attempts').textContent()).toBe('1');
	expect(await page.getByTestId('recipient-error').textContent()).toBe('—');
	const sent = (await templateSends(runner.sandbox)).find((message) => message.to === phoneOf(1, 4));
	expect(await page.getByTestId('recipient-message-id').textContent()).toBe(sent?.uuid);
	await shot('recipient-found');

	await page.getByTestId('find-phone').fill('4915550000000');
	await page.getByTestId('find-submit').click();
	await page.getByTestId('find-error').waitFor();
	expect(await page.getByTestId('find-error').textContent()).toBe(
		`phone 4915550000000 is not a recipient of campaign ${completedId}`,
	);
	// Over the API: the same 404, and a phone that is not one is refused naming the query field.
	const missing = await fetch(`${base}/api/campaigns/${completedId}/report?phone=4915550000000`, {
		headers: { authorization: `Bearer ${TOKEN}` },
	});
	expect(missing.status).toBe(404);
	const bad = await fetch(`${base}/api/campaigns/${completedId}/report?phone=abc`, {
		headers: { authorization: `Bearer ${TOKEN}` },
	});
	expect(bad.status).toBe(400);
	expect(((await bad.json()) as { message: string }).message).toMatch(/^phone "abc" is not a phone number/);
});

test('an empty chart waits for data; a scheduled campaign shows its start; the rate is changed from the page; cancel asks with the count, dismissed cancels nothing, confirmed cancels', async () => {
	const phones = Array.from({ length: 40 }, (_, i) => phoneOf(2, i));
	const startAt = new Date(Date.now() + 3_600_000).toISOString();
	const id = await createByApi(phones, { at: startAt });
	/** A time as the page writes it (the browser's own locale and zone). */
	const local = (iso: string) => page.evaluate((time) => new Date(time).toLocaleString(), iso);
	await page.goto(`${base}/#/campaigns/${id}`);
	await page.getByTestId('chart-waiting').waitFor();
	const start = page.getByTestId('start-at');
	await start.waitFor();
	expect(await start.getAttribute('datetime')).toBe(startAt);
	expect(await start.textContent()).toBe(await local(startAt));
	expect(await page.locator('p.meta').textContent()).toContain(` · starts ${await local(startAt)} (in `);
	// The time to its start counts down each second, between the page's 2 s refreshes too.
	const countdown = page.getByTestId('start-countdown');
	expect(await countdown.textContent()).toMatch(/^in (59 min( \d+ s)?|1 h)$/);
	const first = await countdown.textContent();
	await waitFor(
		'the countdown to tick',
		async () => (await countdown.textContent()) !== first || undefined,
		5_000,
		100,
	);
	// Before the first send the template has no name yet: its id alone.
	expect(await page.getByTestId('template-name').count()).toBe(0);
	expect(await page.getByTestId('template-id').textContent()).toBe(positionalTemplate(runner.business).id);
	expect(await page.getByTestId('chart-waiting').textContent()).toBe('Waiting for data…');
	expect(await page.locator('.uplot').count()).toBe(0);
	await shot('campaign-waiting');

	await page.getByTestId('rate-input').fill('7');
	await page.getByTestId('rate-set').click();
	await waitFor(
		'the page to say the rate changed',
		async () => (await page.getByTestId('action-message').textContent()) === 'Rate set to 7/s.' || undefined,
		10_000,
		100,
	);
	expect((await api<Campaign>('GET', `/api/campaigns/${id}`)).rate_limit).toBe(7);

	await page.getByTestId('cancel').click();
	const dialog = page.getByTestId('confirm-dialog');
	await dialog.waitFor();
	expect(await page.getByTestId('confirm-text').textContent()).toBe(
		'40 pending recipients will not be sent (messages already on their way finish). This cannot be undone.',
	);
	await shot('cancel-confirm');
	await page.getByTestId('confirm-dismiss').click();
	await dialog.waitFor({ state: 'hidden' });
	await page.waitForTimeout(500);
	expect(await stateOf(id)).toBe('scheduled');

	await page.getByTestId('cancel').click();
	await page.getByTestId('confirm-ok').click();
	// The page's refresh can show the new state before the cancel's answer is written beside it: wait for both.
	await waitFor(
		'the page to show cancelled and say how many',
		async () =>
			((await page.getByTestId('state').textContent()) === 'cancelled' &&
				(await page.getByTestId('action-message').textContent()) === 'Cancelled: 40 recipients will not be sent.') ||
			undefined,
		10_000,
		100,
	);
	expect((await api<Campaign>('GET', `/api/campaigns/${id}`)).counts.cancelled).toBe(40);
	await shot('campaign-cancelled');

	// In the list a cancelled campaign is neither green nor a full "sent" bar, and its cancelled are counted.
	await page.goto(`${base}/#/`);
	const cancelledRow = page.getByTestId('campaign-row').filter({ has: page.locator(`a[href="#/campaigns/${id}"]`) });
	const completedRow = page
		.getByTestId('campaign-row')
		.filter({ has: page.locator(`a[href="#/campaigns/${completedId}"]`) });
	await cancelledRow.waitFor();
	expect(await cancelledRow.getByTestId('state').getAttribute('class')).toBe('state cancelled');
	expect(await completedRow.getByTestId('state').getAttribute('class')).toBe('state completed');
	// The page's own view of its elements (this file is typed without the DOM library).
	type Styled = { style: { width: string } };
	const computed = (node: unknown) =>
		(globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string } }).getComputedStyle(node)
			.backgroundColor;
	const colour = (row: typeof cancelledRow) => row.getByTestId('state').evaluate(computed);
	expect(await colour(cancelledRow)).not.toBe(await colour(completedRow));
	const widths = (row: typeof cancelledRow) =>
		row
			.locator('[data-part]')
			.evaluateAll((parts) =>
				Object.fromEntries(
					parts.map((part) => [part.getAttribute('data-part'), (part as unknown as Styled).style.width]),
				),
			);
	expect(await widths(cancelledRow)).toEqual({
		sent: '0%',
		unknown: '0%',
		'not-sent': '0%',
		capped: '0%',
		cancelled: '100%',
		expired: '0%',
		rejected: '0%',
		suppressed: '0%',
	});
	const completedWidths = await widths(completedRow);
	expect(
		Object.fromEntries(
			Object.entries(completedWidths).map(([part, width]) => [part, Math.round(parseFloat(String(width)))]),
		),
	).toEqual({ sent: 83, unknown: 0, 'not-sent': 0, capped: 0, cancelled: 0, expired: 0, rejected: 17, suppressed: 0 });
	expect(await cancelledRow.getByTestId('list-cancelled').textContent()).toBe('40');
	expect(await completedRow.getByTestId('list-rejected').textContent()).toBe('3');
	// Each campaign is listed by its name (the id beside it), created time, template and number.
	expect(await completedRow.getByTestId('campaign-link').textContent()).toBe('November newsletter');
	// A campaign that has sent keeps its template's name: the name, its id small below it.
	const listedTemplate = positionalTemplate(runner.business);
	expect(await completedRow.getByTestId('list-template').locator('span').textContent()).toBe(listedTemplate.name);
	expect(await completedRow.getByTestId('list-template').locator('small').textContent()).toBe(listedTemplate.id);
	expect(await completedRow.getByTestId('list-from').textContent()).toBe(runner.business.phoneNumbers[0]);
	expect(
		Date.parse((await api<Campaign & { created_at: string }>('GET', `/api/campaigns/${completedId}`)).created_at),
	).toBeGreaterThan(Date.now() - 10 * 60_000);
	expect(await completedRow.getByTestId('list-created').textContent()).toMatch(/\d/);
	// A campaign created with a start time is listed with it; one started at its create has none of its own.
	expect(await cancelledRow.getByTestId('list-start').locator('time').getAttribute('datetime')).toBe(startAt);
	expect(await cancelledRow.getByTestId('list-start').textContent()).toBe(await local(startAt));
	expect(await completedRow.getByTestId('list-start').textContent()).toBe('—');
	expect(await cancelledRow.getByTestId('campaign-link').textContent()).toMatch(
		/^Upload \d{4}-\d\d-\d\d \d\d:\d\d UTC$/,
	);
	await shot('list-states');
});

test('the cancel dialog follows the pending count while it is open; a count of one reads singular', async () => {
	// 60 recipients at 5/s: the count moves while the operator reads the question.
	const phones = Array.from({ length: 60 }, (_, i) => phoneOf(5, i));
	const id = await createByApi(phones, { rate: 5 });
	await page.goto(`${base}/#/campaigns/${id}`);
	await waitFor(
		'the campaign to send',
		async () => Number(await page.getByTestId('count-sent').textContent()) > 0 || undefined,
		30_000,
		100,
	);
	await page.getByTestId('cancel').click();
	const text = page.getByTestId('confirm-text');
	const asked = await text.textContent();
	await waitFor(
		'the question to follow the count',
		async () => (await text.textContent()) !== asked || undefined,
		10_000,
		100,
	);
	// What it asks is what the page behind it shows now.
	const pendingNow = async () =>
		Number(await page.getByTestId('count-pending').textContent()) +
		Number(await page.getByTestId('count-claimed').textContent());
	await waitFor(
		'the question and the page to agree',
		async () => {
			const n = await pendingNow();
			return (
				((await text.textContent())?.startsWith(`${n} pending recipients will not be sent`) &&
					(await page.getByTestId('confirm-ok').textContent()) === `Cancel ${n} recipients`) ||
				undefined
			);
		},
		10_000,
		50,
	);
	await page.getByTestId('confirm-ok').click();
	await waitFor(
		'the campaign to be cancelled',
		async () => (await page.getByTestId('state').textContent()) === 'cancelled' || undefined,
		10_000,
		100,
	);

	const single = await createByApi([phoneOf(6, 0)], { at: new Date(Date.now() + 3_600_000).toISOString() });
	await page.goto(`${base}/#/campaigns/${single}`);
	await page.getByTestId('start-at').waitFor();
	await page.getByTestId('cancel').click();
	expect(await text.textContent()).toBe(
		'1 pending recipient will not be sent (messages already on their way finish). This cannot be undone.',
	);
	expect(await page.getByTestId('confirm-ok').textContent()).toBe('Cancel 1 recipient');
	await page.getByTestId('confirm-ok').click();
	await waitFor(
		'the page to say one was cancelled',
		async () =>
			(await page.getByTestId('action-message').textContent()) === 'Cancelled: 1 recipient will not be sent.' ||
			undefined,
		10_000,
		100,
	);
});

test('retry not-sent, confirmed with the count, sends again only the recipients not sent', async () => {
	const phones = Array.from({ length: 20 }, (_, i) => phoneOf(3, i));
	// The service takes 6 sends, then says the template is gone: the campaign fails, the rest not sent.
	service.forwarded = 0;
	service.refuseAfter = 6;
	const id = await createByApi(phones);
	await page.goto(`${base}/#/campaigns/${id}`);
	await waitFor(
		'the campaign to fail',
		async () => (await page.getByTestId('state').textContent()) === 'failed' || undefined,
		30_000,
		200,
	);
	const failed = await api<Campaign>('GET', `/api/campaigns/${id}`);
	expect(failed.counts.sent).toBe(6);
	expect(failed.counts.not_sent).toBe(14);
	await waitFor(
		'the retry button to count them',
		async () => (await page.getByTestId('retry-not-sent').textContent()) === 'Retry not sent (14)…' || undefined,
		10_000,
		100,
	);
	service.refuseAfter = Infinity;

	await page.getByTestId('retry-not-sent').click();
	expect(await page.getByTestId('confirm-text').textContent()).toBe(
		'14 recipients were proven not sent; they are sent again, the others are left as they are.',
	);
	await shot('retry-confirm');
	await page.getByTestId('confirm-ok').click();
	await waitFor(
		'the retried campaign to complete',
		async () => (await page.getByTestId('state').textContent()) === 'completed' || undefined,
		30_000,
		200,
	);
	expect(await page.getByTestId('count-sent').textContent()).toBe('20');
	const sends = sendsByPhone((await templateSends(runner.sandbox)).filter((message) => phones.includes(message.to)));
	expect(phones.map((phone) => sends.get(phone)?.length ?? 0)).toEqual(phones.map(() => 1));
	await shot('campaign-retried');
});

test('delete is offered for a finished campaign only and asks first; confirmed, the campaign is gone and the list shows', async () => {
	const id = await createByApi([phoneOf(4, 0), phoneOf(4, 1)], { at: new Date(Date.now() + 3600_000).toISOString() });
	await page.goto(`${base}/#/campaigns/${id}`);
	await waitFor(
		'the page to show the campaign',
		async () => (await page.getByTestId('state').textContent()) === 'scheduled' || undefined,
		10_000,
		100,
	);
	// Scheduled, it may still send: not offered.
	expect(await page.getByTestId('delete').isDisabled()).toBe(true);
	await api('POST', `/api/campaigns/${id}/cancel`);
	await waitFor(
		'the cancel to show',
		async () => (await page.getByTestId('delete').isEnabled()) || undefined,
		10_000,
		100,
	);

	await page.getByTestId('delete').click();
	expect(await page.getByTestId('confirm-text').textContent()).toBe(
		'Its recipients, ledger, report and delivery tracking leave Redis for good: download the report first to keep it. This cannot be undone.',
	);
	await page.getByTestId('confirm-dismiss').click();
	expect(await stateOf(id)).toBe('cancelled');

	await page.getByTestId('delete').click();
	await page.getByTestId('confirm-ok').click();
	await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
	const gone = await fetch(`${base}/api/campaigns/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
	expect(gone.status).toBe(404);
});

test('the queue board links back to the console', async () => {
	await page.goto(`${base}/admin/queues`);
	// bull-board lists its links in the menu at the header's right end.
	await page.locator('header ul li').last().locator('button').click();
	const back = page.getByText('← Console');
	await back.waitFor();
	await shot('queues-link');
	await back.click();
	await page.waitForURL(`${base}/`);
	await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
	// Every view above (the form, the dialog, the bar's widths, the chart) ran under the console's CSP.
	expect(violations).toEqual([]);
});
