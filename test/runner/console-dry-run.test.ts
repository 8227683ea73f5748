/**
 * The console's "Check first (dry run)" on New campaign (#23, #21 item 10), in a real browser
 * (Debian's Chromium through playwright-core) against a running `convo-runner start`: the dry run
 * shows the counts, the grouped reasons, the first rejected rows with their lines and the
 * estimated duration, stores and sends nothing; the form's one "Create and start" then creates the
 * campaign, whose counts are those the dry run showed. The console guide's picture of a dry run is taken here.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Browser, Page } from 'playwright-core';

import { consolePage, guideShot, launchChromium } from './consoleSupport';
import { positionalTemplate, startApi, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(180_000);

const TOKEN = 'console-dry-run-token-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';
let browser: Browser;
let page: Page;
let violations: string[] = [];

beforeAll(async () => {
	base = await startApi(runner);
	browser = await launchChromium();
	({ page, violations } = await consolePage(browser, base, TOKEN, { width: 1300, height: 1000 }));
});
afterAll(async () => {
	await browser?.close();
});

async function api<T>(path: string): Promise<T> {
	return (await (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as T;
}
async function sandboxCounts(): Promise<unknown> {
	return ((await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`)).json()) as { counts: unknown }).counts;
}

test('Check first (dry run) shows counts, reasons, first rejections and the estimate without creating anything; Create and start then creates what it showed', async () => {
	const phones = Array.from({ length: 10 }, (_, i) => `49171800${String(i).padStart(5, '0')}`);
	// Repeats of lines 2 and 3 (lines 12, 13) and a phone too short (line 14).
	const lines = [
		'phone,1,2',
		...phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`),
		`${phones[0]},again,0`,
		`${phones[1]},again,1`,
		'12345,short,2',
	];
	const dir = mkdtempSync(join(tmpdir(), 'console-dry-run-'));
	writeFileSync(join(dir, 'recipients.csv'), `${lines.join('\n')}\n`);
	const requestsBefore = await sandboxCounts();

	await page.getByTestId('new-campaign').click();
	await page.getByTestId('create-form').waitFor();
	await page.getByTestId('create-name').fill('Checked first');
	await page.getByTestId('create-file').setInputFiles(join(dir, 'recipients.csv'));
	await page.getByTestId('create-template').fill(positionalTemplate(runner.business).id);
	await page.getByTestId('create-from').fill(runner.business.phoneNumbers[0]);
	await page.getByTestId('create-rate').fill('2');
	await page.getByTestId('create-dry-run').click();

	const result = page.getByTestId('dry-run-result');
	await result.waitFor();
	expect(await page.getByTestId('dry-run-counts').textContent()).toBe('13 rows: 10 accepted, 3 rejected.');
	expect(await page.getByTestId('dry-run-estimate').textContent()).toMatch(
		/^Estimated duration: 5 s at 2 sends\/s, from .+ until about .+\.$/,
	);
	const reasons = await page.getByTestId('dry-run-reasons').locator('tbody tr').allTextContents();
	expect(reasons).toEqual([
		'2rejectedphone is already in this campaign (line 2) (and others that differ only in a number)',
		expect.stringMatching(/^1rejectedphone has 5 digits/),
	]);
	const rejections = await page.getByTestId('dry-run-rejections').locator('tbody tr').allTextContents();
	expect(rejections).toEqual([
		`12${phones[0]}phone is already in this campaign (line 2)`,
		`13${phones[1]}phone is already in this campaign (line 3)`,
		expect.stringMatching(/^1412345phone has 5 digits/),
	]);
	await guideShot(page, 'dry-run');

	// Nothing created, nothing sent.
	expect(await api<{ total: number }>('/api/campaigns')).toMatchObject({ total: 0 });
	expect(await sandboxCounts()).toEqual(requestsBefore);

	// One button creates, the form's own: the result points at it rather than repeating it under another label.
	expect(await page.getByTestId('dry-run-next').textContent()).toMatch(
		/^Create and start \(above\) sends this request/,
	);
	expect(await page.getByRole('button', { name: /^Create/ }).allTextContents()).toEqual(['Create and start']);
	await page.getByTestId('create-submit').click();
	const summary = page.getByTestId('create-summary');
	await summary.waitFor();
	expect(await summary.locator('p').first().textContent()).toBe('Created: 10 recipients accepted, 3 rejected.');
	const listed = await api<{ items: Array<{ name: string; total: number }> }>('/api/campaigns');
	expect(listed.items).toMatchObject([{ name: 'Checked first', total: 13 }]);
	expect(violations).toEqual([]);
});

/** A CSV of two recipients in a fresh folder. */
function recipientsCsv(): string {
	const path = join(mkdtempSync(join(tmpdir(), 'console-dry-run-')), 'recipients.csv');
	writeFileSync(path, 'phone,1,2\n+4917180099001,Ana,#1\n+4917180099002,Bo,#2\n');
	return path;
}

/** The form, empty, with the CSV chosen and the campaign creates the browser asks for counted. */
async function freshForm(): Promise<{ creates: string[] }> {
	await page.goto(`${base}/#/`);
	await page.getByTestId('new-campaign').click();
	await page.getByTestId('create-form').waitFor();
	await page.getByTestId('create-file').setInputFiles(recipientsCsv());
	const creates: string[] = [];
	page.on('request', (request) => {
		if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/campaigns')
			creates.push(request.url());
	});
	return { creates };
}

test("Check first (dry run) without a template says so as the form's own check does, by the field's label, and asks the runner nothing", async () => {
	const { creates } = await freshForm();
	await page.getByTestId('create-from').fill(runner.business.phoneNumbers[0]);
	await page.getByTestId('create-dry-run').click();

	const error = page.getByTestId('create-error');
	await error.waitFor();
	expect(await error.textContent()).toMatch(/^Template id: \S/);
	expect(await error.textContent()).not.toMatch(/template_id|query string/);
	expect(await page.getByTestId('create-template').evaluate((input) => input.matches(':focus'))).toBe(true);
	expect(creates).toEqual([]);
	expect(await page.getByTestId('dry-run-result').count()).toBe(0);
});

test("The runner's refusals name the fields as the form labels them", async () => {
	const { creates } = await freshForm();
	await page.getByTestId('create-template').fill(positionalTemplate(runner.business).id);
	await page.getByTestId('create-from').fill(runner.business.phoneNumbers[0]);
	await page.getByTestId('create-tz').fill('Europe/Berlin');
	await page.getByTestId('create-dry-run').click();
	const error = page.getByTestId('create-error');
	await error.waitFor();
	expect(await error.textContent()).toBe('Time zone of the cron goes with Repeat (cron)');
	expect(creates).toHaveLength(1);

	// An end before the start: both fields by their labels.
	await page.getByTestId('create-tz').fill('');
	await page.getByTestId('create-at').fill('2099-01-02T10:00');
	await page.getByTestId('create-end').fill('2099-01-02T09:00');
	await page.getByTestId('create-submit').click();
	await waitForText(error, /^End at /);
	expect(await error.textContent()).toBe('End at must be after the campaign starts (Start at)');
	expect(await api<{ total: number }>('/api/campaigns')).toMatchObject({ total: 1 });
	expect(violations).toEqual([]);
});

test('counts read as English: one row, one send per second, one recipient accepted', async () => {
	await page.goto(`${base}/#/`);
	await page.getByTestId('new-campaign').click();
	await page.getByTestId('create-form').waitFor();
	const path = join(mkdtempSync(join(tmpdir(), 'console-dry-run-')), 'one.csv');
	writeFileSync(path, 'phone,1,2\n+4917180099101,Ana,#1\n');
	await page.getByTestId('create-file').setInputFiles(path);
	await page.getByTestId('create-template').fill(positionalTemplate(runner.business).id);
	await page.getByTestId('create-from').fill(runner.business.phoneNumbers[0]);
	await page.getByTestId('create-rate').fill('1');
	await page.getByTestId('create-at').fill('2099-01-02T10:00');
	await page.getByTestId('create-dry-run').click();
	await page.getByTestId('dry-run-result').waitFor();
	expect(await page.getByTestId('dry-run-counts').textContent()).toBe('1 row: 1 accepted, 0 rejected.');
	expect(await page.getByTestId('dry-run-estimate').textContent()).toMatch(/^Estimated duration: \d+ s at 1 send\/s, /);
	await page.getByTestId('create-submit').click();
	const summary = page.getByTestId('create-summary');
	await summary.waitFor();
	expect(await summary.locator('p').first().textContent()).toBe('Created: 1 recipient accepted, 0 rejected.');
});

async function waitForText(locator: ReturnType<Page['getByTestId']>, pattern: RegExp): Promise<void> {
	await waitFor(`text ${String(pattern)}`, async () => pattern.test((await locator.textContent()) ?? ''), 10_000, 100);
}
