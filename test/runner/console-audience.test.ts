/**
 * The console's audience pages in a real browser (Debian's Chromium driven by playwright-core) at
 * 1280 px and at 390 px against a running `convo-runner start`: the suppression list (add with a
 * reason, look up, remove after the in-page question, import a CSV whose bad row is named by its
 * line, export downloaded and read) and a sending number's frequency cap (set, shown, cleared, a bad
 * policy refused naming its field). Every page: no sideways scroll, no serious accessibility
 * violation, no CSP refusal.
 */
import { readFileSync } from 'node:fs';

import type { Browser, Page } from 'playwright-core';

import { createCampaign } from '../../runner/src/core/campaigns';
import {
	consolePage,
	guideShot,
	isCard,
	launchChromium,
	PHONE,
	seriousAccessibilityViolations,
	SHOTS,
	withinWidth,
} from './consoleSupport';
import { positionalTemplate, startApi, useRunnerUnderTest, writeRecipientsCsv } from './support';

jest.setTimeout(180_000);

const TOKEN = 'console-audience-token-0123456789';
const DEFAULT_CAP = '3/7d';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_FREQUENCY_CAP: DEFAULT_CAP });
let base = '';
let browser: Browser;
let campaignNumber = '';

beforeAll(async () => {
	base = await startApi(runner);
	browser = await launchChromium();
	campaignNumber = runner.business.phoneNumbers[0];
	// Scheduled an hour ahead: a campaign whose number the cap page offers, nothing sent.
	const { path } = writeRecipientsCsv(1, { seed: 7 });
	const at = new Date(Date.now() + 3_600_000).toISOString();
	await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		source: path,
		at,
		from: campaignNumber,
	});
	// The number's daily counts as its settles leave them (dailyCounts.test.ts proves the settles write them):
	// 41 sent and 2 refused today, 7 sent yesterday.
	const today = Math.floor(Date.now() / 86_400_000);
	await runner.context.redis.hset(runner.context.keys.dailyCounts(campaignNumber), {
		[`${today}:s`]: 41,
		[`${today}:f`]: 2,
		[`${today - 1}:s`]: 7,
	});
});
afterAll(async () => {
	await browser?.close();
});

const WIDTHS = [{ width: 1280, height: 900 }, PHONE];

/** An element as the layout check reads it in the page (the tests compile without the DOM's types). */
interface PlacedElement {
	tagName: string;
	className: string;
	getAttribute(name: string): string | null;
	getBoundingClientRect(): { right: number };
}

/** No sideways scroll; else the elements past the window's right edge, so a failure says what overflows. */
async function expectNoSidewaysScroll(page: Page): Promise<void> {
	const overflowing = await page.locator('html').evaluate((root) => {
		const width = root.clientWidth;
		if (root.scrollWidth <= width) return [];
		return (Array.from(root.querySelectorAll('body *')) as PlacedElement[])
			.filter((node) => node.getBoundingClientRect().right > width + 0.5)
			.map((node) => `${node.tagName.toLowerCase()}.${node.className} ${node.getAttribute('data-testid') ?? ''}`);
	});
	expect(overflowing).toEqual([]);
}

/** Checks a page as it shows now: no sideways scroll and no serious accessibility violation. */
async function expectSoundLayout(page: Page): Promise<void> {
	await expectNoSidewaysScroll(page);
	expect(await seriousAccessibilityViolations(page)).toEqual([]);
}

test.each(WIDTHS)('the suppression list at $width px: add, look up, remove, import, export', async (viewport) => {
	const { page, violations } = await consolePage(browser, base, TOKEN, viewport);
	const width = viewport.width;
	// Phones of this width's own: both widths share the runner's list.
	const added = `49151${String(width).padStart(4, '0')}0001`;
	const imported = [`49151${String(width).padStart(4, '0')}0002`, `49151${String(width).padStart(4, '0')}0003`];
	await page.getByRole('link', { name: 'Suppressions' }).click();
	await page.getByRole('heading', { name: 'Suppression list' }).waitFor();

	// Added with a reason: it heads the list, newest first, with its reason and source.
	await page.getByLabel('Phone to add').fill(`+${added}`);
	await page.getByLabel('Reason', { exact: true }).fill('asked by phone');
	await page.getByTestId('suppression-add-submit').click();
	await page.getByTestId('suppression-add-result').getByText(`${added} added (asked by phone).`).waitFor();
	const firstRow = page.getByTestId('suppression-row').first();
	await firstRow.getByText(added).waitFor();
	expect(await firstRow.textContent()).toContain('asked by phone');
	expect(await firstRow.textContent()).toContain('operator');

	// A phone the runner cannot read: the error names the field as the form labels it.
	await page.getByLabel('Phone to add').fill('12');
	await page.getByTestId('suppression-add-submit').click();
	await page.getByText(/^Phone to add has 2 digits/).waitFor();

	// Looked up: suppressed since, with its source and reason.
	await page.getByLabel('Phone to look up').fill(`+49 151 ${added.slice(5)}`);
	await page.getByTestId('suppression-lookup-submit').click();
	const answer = page.getByTestId('suppression-lookup-answer');
	await answer.getByText('is suppressed since').waitFor();
	expect(await answer.textContent()).toContain('(operator): asked by phone');
	await expectSoundLayout(page);

	// Removed by keyboard after the page asks: the look-up then says so and the list no longer holds it.
	await answer.getByRole('button', { name: `Remove ${added}` }).focus();
	await page.keyboard.press('Enter');
	await page.getByTestId('confirm-dialog').waitFor();
	expect(await page.getByTestId('confirm-title').textContent()).toBe(`Take ${added} off the suppression list?`);
	await page.getByTestId('confirm-ok').focus();
	await page.keyboard.press('Enter');
	await answer.getByText(`${added} is not on the suppression list`).waitFor();
	await page.getByTestId('suppression-phone').getByText(added).waitFor({ state: 'detached' });

	// An import with one bad row: counted, the bad row named by its line and its rule, the good ones listed.
	await page.getByLabel('CSV file').setInputFiles({
		name: 'opt-outs.csv',
		mimeType: 'text/csv',
		buffer: Buffer.from(`phone,reason\n+${imported[0]},mailed us\nnot a phone,typo\n${imported[1]},\n`),
	});
	await page.getByTestId('suppression-import-submit').click();
	const counts = page.getByTestId('suppression-import-counts');
	await counts.waitFor();
	expect(await counts.textContent()).toBe('3 rows read: 2 added, 0 already on the list, 1 rejected.');
	const rejections = await page
		.getByTestId('suppression-rejection')
		.evaluateAll((rows) =>
			rows.map((row) =>
				Array.from(row.querySelectorAll('td'), (cell) => (cell as { textContent: string | null }).textContent),
			),
		);
	expect(rejections).toEqual([
		['3', 'phone is not a phone number: only digits, spaces, dashes, brackets and a leading + are allowed'],
	]);
	await page.getByTestId('suppression-phone').getByText(imported[1]).waitFor();
	await expectSoundLayout(page);
	// On a phone each entry is a card, its Remove button in reach.
	if (width === PHONE.width) {
		expect(await isCard(page.getByTestId('suppression-row').first())).toBe(true);
		expect(await withinWidth(page.getByTestId('suppression-remove').first(), width)).toBe(true);
	}
	await page.screenshot({ path: `${SHOTS}/console-suppressions-${width}.png`, fullPage: true });
	if (width === 1280) await guideShot(page, 'suppressions');

	// The export: the whole list as CSV, the imported phones with their reason and source.
	const [download] = await Promise.all([
		page.waitForEvent('download'),
		page.getByRole('link', { name: 'Export CSV' }).click(),
	]);
	expect(download.suggestedFilename()).toBe('suppressions.csv');
	const lines = readFileSync(await download.path(), 'utf8')
		.trim()
		.split('\n');
	expect(lines[0]).toBe('phone,reason,source,at');
	expect(lines.find((line) => line.startsWith(`${imported[0]},`))).toMatch(`${imported[0]},mailed us,import,`);
	expect(lines.some((line) => line.startsWith(`${added},`))).toBe(false);
	expect(violations).toEqual([]);
	await page.context().close();
});

test.each(WIDTHS)(
	'the frequency cap at $width px: choose a number, set, show, clear; a bad policy',
	async (viewport) => {
		const { page, violations } = await consolePage(browser, base, TOKEN, viewport);
		const width = viewport.width;
		await page.getByRole('link', { name: 'Frequency cap' }).click();
		await page.getByRole('heading', { name: 'Frequency cap' }).waitFor();
		// At 1280 px the number is picked among the campaigns' numbers; at 390 px typed, as any number may be.
		const number = width === 1280 ? campaignNumber : `4930100${width}`;
		if (width === 1280) await page.getByTestId('cap-known').getByRole('link', { name: campaignNumber }).click();
		else {
			await page.getByLabel('Sending number').fill(`+49 30 100 ${width}`);
			await page.getByRole('button', { name: 'Show' }).click();
		}
		const capNow = page.getByTestId('cap-value-cap-now');
		await capNow.getByText(`at most ${DEFAULT_CAP} per phone`).waitFor();
		expect(await page.getByTestId('cap-value-number').textContent()).toBe(number);
		expect(await page.getByTestId('cap-value-where-it-comes-from').textContent()).toBe(
			'the business default (RUNNER_FREQUENCY_CAP)',
		);
		expect(await page.getByRole('button', { name: 'Clear its own cap…' }).isDisabled()).toBe(true);
		// The syntax is told beside the field, and read with it.
		expect(await page.getByLabel('Cap policy').getAttribute('aria-describedby')).toBe('cap-syntax');
		expect(await page.getByTestId('cap-syntax').textContent()).toContain('1/24h,3/7d one a day and three a week');
		// The number's sends per day, today first: the campaigns' number has them, a typed one has none.
		const days = page.getByTestId('daily-day');
		await days.first().waitFor();
		expect(await days.count()).toBe(8);
		const today = new Date().toISOString().slice(0, 10);
		const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
		const cells = async (row: number) => days.nth(row).locator('td').allTextContents();
		expect(await cells(0)).toEqual(width === 1280 ? [today, '41', '2'] : [today, '0', '0']);
		expect(await cells(1)).toEqual(width === 1280 ? [yesterday, '7', '0'] : [yesterday, '0', '0']);
		if (width !== 1280) expect(await isCard(days.first())).toBe(true);
		await expectSoundLayout(page);

		// A policy the runner cannot read: refused, the error naming the field by its label and the rule.
		await page.getByLabel('Cap policy').fill('2 per day');
		await page.getByRole('button', { name: 'Set cap' }).click();
		await page.getByText(/^Cap policy: rule 1 must be like 1\/24h or 1\/24h,3\/7d/).waitFor();
		expect(await capNow.textContent()).toBe(`at most ${DEFAULT_CAP} per phone`);

		await page.getByLabel('Cap policy').fill('1/24h, 2/7d');
		await page.getByRole('button', { name: 'Set cap' }).click();
		await capNow.getByText('at most 1/24h,2/7d per phone').waitFor();
		expect(await page.getByTestId('cap-value-where-it-comes-from').textContent()).toBe('its own cap');
		// Shown again from the runner, as a new visit reads it.
		await page.reload();
		await capNow.getByText('at most 1/24h,2/7d per phone').waitFor();
		expect(await page.getByLabel('Cap policy').inputValue()).toBe('1/24h,2/7d');
		await expectSoundLayout(page);
		await page.screenshot({ path: `${SHOTS}/console-cap-${width}.png`, fullPage: true });
		if (width === 1280) await guideShot(page, 'cap');

		// Cleared after the page asks: the default holds again.
		await page.getByRole('button', { name: 'Clear its own cap…' }).click();
		expect(await page.getByTestId('confirm-text').textContent()).toBe(
			`Its own cap 1/24h,2/7d is removed: the default ${DEFAULT_CAP} holds for it again.`,
		);
		await page.getByTestId('confirm-ok').click();
		await capNow.getByText(`at most ${DEFAULT_CAP} per phone`).waitFor();
		expect(await page.getByTestId('cap-value-its-own-cap').textContent()).toBe('none set');
		await expectNoSidewaysScroll(page);
		expect(violations).toEqual([]);
		await page.context().close();
	},
);

test.each(WIDTHS)(
	'the daily budget at $width px: shown, set, a wrong limit named, a waiting campaign, cleared',
	async (viewport) => {
		const { page, violations } = await consolePage(browser, base, TOKEN, viewport);
		const width = viewport.width;
		const api = (method: string, path: string, body?: unknown) =>
			fetch(`${base}${path}`, {
				method,
				headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
				body: body ? JSON.stringify(body) : undefined,
			}).then((response) => response.json() as Promise<Record<string, unknown>>);
		// Unlimited forgets the customers counted (an earlier width's); cleared, no limit is set at all.
		await api('PUT', '/api/budget', { limit: 'unlimited' });
		await api('DELETE', '/api/budget');
		await page.getByRole('link', { name: 'Daily budget' }).click();
		await page.getByRole('heading', { name: 'Daily budget' }).waitFor();
		const limitShown = page.getByTestId('budget-value-limit');
		await limitShown.getByText('unlimited').waitFor();
		expect(await page.getByTestId('budget-value-source').textContent()).toBe(
			'no limit is set, neither here nor as a default',
		);
		expect(await page.getByRole('button', { name: 'Clear the limit…' }).isDisabled()).toBe(true);
		await expectSoundLayout(page);

		await page.getByLabel('Daily limit').fill('lots');
		await page.getByRole('button', { name: 'Set limit' }).click();
		await page
			.getByText(/^Daily limit must be a whole number of customers from 1 to 1,000,000, or unlimited/)
			.waitFor();

		await page.getByLabel('Daily limit').fill('1');
		await page.getByRole('button', { name: 'Set limit' }).click();
		await limitShown.getByText('1 customer a day').waitFor();
		expect(await page.getByTestId('budget-value-left').textContent()).toBe('1 customer');
		expect(await page.getByTestId('budget-value-used').textContent()).toBe('0 customers');

		if (width === 1280) {
			// A workflow's send counts the one customer the limit allows; a campaign to a new customer then waits,
			// on this page and on its own.
			expect(await api('POST', '/api/budget/customers', { phone: '+4917480000001' })).toMatchObject({
				counted: true,
				new_customer: true,
			});
			const { path } = writeRecipientsCsv(1, { seed: 8 });
			const created = await createCampaign(runner.context, {
				templateId: positionalTemplate(runner.business).id,
				source: path,
				from: campaignNumber,
				name: 'Waits for the limit',
			});
			if (created.kind !== 'campaign') throw new Error('expected a campaign');
			const waiting = page.getByTestId('budget-waiting-campaign');
			await waiting.first().waitFor({ timeout: 60_000 });
			expect(await waiting.locator('td').first().textContent()).toBe('Waits for the limit');
			expect(await page.getByTestId('budget-value-left').textContent()).toBe('0 customers');
			await expectSoundLayout(page);
			await page.screenshot({ path: `${SHOTS}/console-budget-${width}.png`, fullPage: true });
			await guideShot(page, 'budget');
			await waiting.getByRole('link', { name: 'Waits for the limit' }).click();
			await page
				.getByTestId('waiting')
				.getByText(/^Waiting for the daily limit: the next customer can be counted at /)
				.waitFor();
			await page.goBack();
		} else {
			await expectSoundLayout(page);
			await page.screenshot({ path: `${SHOTS}/console-budget-${width}.png`, fullPage: true });
		}

		await page.getByRole('button', { name: 'Clear the limit…' }).click();
		await page.getByTestId('confirm-ok').click();
		await limitShown.getByText('unlimited').waitFor();
		expect(violations).toEqual([]);
		await page.context().close();
	},
);
