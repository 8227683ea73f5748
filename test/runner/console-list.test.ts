/**
 * The console's campaign list in a real browser (Debian's Chromium driven by playwright-core) at
 * 1280 px against a running `convo-runner start`: 106 campaigns paged 50 at a time to the last page
 * and back by keyboard, a search and a state filter narrowing the list, and a window that never
 * scrolls sideways, however long a name. At 390 px (a phone) the rows are cards and paging is in
 * reach; a campaign's page fits too, its every action in reach (a draft started, paused, cancelled).
 */
import type { Browser } from 'playwright-core';

import { cancel, createCampaign } from '../../runner/src/core/campaigns';
import {
	consolePage,
	isCard,
	launchChromium,
	PHONE,
	seriousAccessibilityViolations,
	SHOTS,
	sideways,
	withinWidth,
} from './consoleSupport';
import { positionalTemplate, startApi, useRunnerUnderTest, writeRecipientsCsv } from './support';

jest.setTimeout(180_000);

const TOKEN = 'console-list-token-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';
let browser: Browser;
const BULK = 105;
let oddOne = '';

beforeAll(async () => {
	base = await startApi(runner);
	browser = await launchChromium();
	const { path } = writeRecipientsCsv(1, { seed: 41 });
	// Scheduled an hour ahead: stored and listed through the real create, nothing sent.
	const at = new Date(Date.now() + 3_600_000).toISOString();
	const settings = { templateId: positionalTemplate(runner.business).id, source: path, at };
	const make = async (name: string) => {
		const answer = await createCampaign(runner.context, { ...settings, name, from: runner.business.phoneNumbers[0] });
		if (answer.kind !== 'campaign') throw new Error('not a campaign');
		return answer.id;
	};
	for (let i = 0; i < BULK; i += 1) await make(`Bulk ${String(i).padStart(3, '0')}`);
	oddOne = await make(`A name long enough to push a column out of any window ${'x'.repeat(60)}`);
	await cancel(runner.context, oddOne);
});
afterAll(async () => {
	await browser?.close();
});

test('at 1280 px: page past 100 and back, search, filter by state; the page never scrolls sideways', async () => {
	const { page, violations } = await consolePage(browser, base, TOKEN, { width: 1280, height: 900 });
	const rows = page.getByTestId('campaign-row');
	const count = page.getByTestId('list-count');
	const noSideways = async () =>
		expect(await page.locator('html').evaluate((root) => root.scrollWidth - root.clientWidth)).toBe(0);
	await rows.first().waitFor();
	expect(await count.textContent()).toBe(`1–50 of ${BULK + 1}`);
	expect(await rows.count()).toBe(50);
	await noSideways();
	expect(await seriousAccessibilityViolations(page)).toEqual([]);
	// Countdowns past an hour read hours and whole minutes, past two days days and hours; never "60 min".
	const spoken = (seconds: number) =>
		page.evaluate(
			(value) =>
				(globalThis as unknown as { ConvoConsole: { spoken: (s: number) => string } }).ConvoConsole.spoken(value),
			seconds,
		);
	expect([await spoken(3660), await spoken(7199), await spoken(31_535_999)]).toEqual([
		'1 h 1 min',
		'1 h 59 min',
		'364 d 23 h',
	]);
	// The long name is cut to its cell; the whole of it is its title.
	const link = page.getByTestId('campaign-link').first();
	expect(await link.getAttribute('title')).toMatch(/^A name long enough/);

	// Every field has a label an assistive tool reads.
	for (const label of ['Search', 'State', 'Number', 'Sort']) await page.getByLabel(label, { exact: true }).waitFor();

	// By keyboard: Next is reached and pressed twice, to the last page past the first hundred.
	await page.getByTestId('page-next').focus();
	await page.keyboard.press('Enter');
	await page.getByText(`51–100 of ${BULK + 1}`).waitFor();
	await page.keyboard.press('Enter');
	await page.getByText(`101–${BULK + 1} of ${BULK + 1}`).waitFor();
	expect(await rows.count()).toBe(BULK + 1 - 100);
	expect(await page.getByTestId('page-next').isDisabled()).toBe(true);
	expect(await page.getByTestId('campaign-link').last().textContent()).toBe('Bulk 000');
	await noSideways();
	await page.getByTestId('page-previous').click();
	await page.getByText(`51–100 of ${BULK + 1}`).waitFor();

	// A search starts again at the first page and survives the 2 s refresh with its focus.
	await page.getByLabel('Search').fill('bulk 10');
	await page.getByText('1–5 of 5').waitFor();
	expect((await page.getByTestId('campaign-link').allTextContents()).sort()).toEqual([
		'Bulk 100',
		'Bulk 101',
		'Bulk 102',
		'Bulk 103',
		'Bulk 104',
	]);
	await page.waitForTimeout(2_500);
	expect(await page.getByLabel('Search').inputValue()).toBe('bulk 10');
	expect(await page.getByTestId('list-search').evaluate((field) => field === field.ownerDocument.activeElement)).toBe(
		true,
	);
	expect(await rows.count()).toBe(5);

	await page.getByLabel('Search').fill('');
	await page.getByLabel('State', { exact: true }).selectOption('cancelled');
	await page.getByText('1–1 of 1').waitFor();
	expect(await page.getByTestId('list-id').textContent()).toBe(oddOne);
	await page.getByLabel('Search').fill('bulk');
	await page.getByTestId('no-match').waitFor();
	await noSideways();
	await page.screenshot({ path: `${SHOTS}/console-list-1280.png`, fullPage: true });
	expect(violations).toEqual([]);
	await page.context().close();
});

test('at 390 px (a phone): campaigns as cards, paging in reach, no sideways scroll', async () => {
	const { page, violations } = await consolePage(browser, base, TOKEN, PHONE);
	const rows = page.getByTestId('campaign-row');
	await rows.first().waitFor();
	expect(await sideways(page)).toBe(0);
	expect(await isCard(rows.first())).toBe(true);
	expect(await withinWidth(rows.first(), PHONE.width)).toBe(true);
	expect(await seriousAccessibilityViolations(page)).toEqual([]);
	await page.screenshot({ path: `${SHOTS}/console-list-390.png`, fullPage: true });

	// The pager is in reach and turns the page; the long name's card still fits.
	const next = page.getByTestId('page-next');
	expect(await withinWidth(next, PHONE.width)).toBe(true);
	await next.click();
	await page.getByText(`51–100 of ${BULK + 1}`).waitFor();
	expect(await withinWidth(page.getByTestId('page-previous'), PHONE.width)).toBe(true);
	await page.getByLabel('State', { exact: true }).selectOption('cancelled');
	await page.getByText('1–1 of 1').waitFor();
	expect(await sideways(page)).toBe(0);
	expect(await withinWidth(rows.first(), PHONE.width)).toBe(true);
	expect(violations).toEqual([]);
	await page.context().close();
});

test("at 390 px: a campaign's page fits, every action in reach; a draft started, paused and cancelled from it", async () => {
	// A draft that starts an hour after its start: nothing is sent.
	const created = await fetch(`${base}/api/campaigns`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			name: 'On a phone',
			draft: true,
			template_id: positionalTemplate(runner.business).id,
			from: runner.business.phoneNumbers[0],
			at: new Date(Date.now() + 3_600_000).toISOString(),
			recipients: [{ phone: '+4917180000390', 1: 'Ana', 2: '#1' }],
		}),
	});
	const { id } = (await created.json()) as { id: string };
	const { page, violations } = await consolePage(browser, base, TOKEN, PHONE);
	await page.goto(`${base}/#/campaigns/${id}`);
	const state = page.getByTestId('state').first();
	await state.filter({ hasText: 'draft' }).waitFor();
	expect(await sideways(page)).toBe(0);
	for (const action of ['start', 'pause', 'resume', 'cancel', 'retry-not-sent', 'reconcile', 'download', 'rate-set'])
		expect([action, await withinWidth(page.getByTestId(action), PHONE.width)]).toEqual([action, true]);
	expect(await seriousAccessibilityViolations(page)).toEqual([]);
	await page.screenshot({ path: `${SHOTS}/console-campaign-390.png`, fullPage: true });

	await page.getByTestId('start').click();
	await state.filter({ hasText: 'scheduled' }).waitFor();
	await page.getByTestId('pause').click();
	await state.filter({ hasText: 'paused' }).waitFor();
	await page.getByTestId('cancel').click();
	await page.getByTestId('confirm-ok').click();
	await state.filter({ hasText: 'cancelled' }).waitFor();
	expect(await sideways(page)).toBe(0);
	expect(violations).toEqual([]);
	await page.context().close();
});
