/**
 * The console's routing when the runner answers slowly, in a real browser (Debian's Chromium
 * through playwright-core) against a running `convo-runner start`: the browser holds each API answer
 * for SLOW_MS (as a runner under load does), and the operator leaves the list while its refresh is
 * on its way. The late list must not replace the page the operator went to, and the next click
 * must still navigate.
 */
import type { Browser, Page, Request } from 'playwright-core';

import { consolePage, launchChromium } from './consoleSupport';
import { positionalTemplate, startApi, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(120_000);

const TOKEN = 'console-routing-token-0123456789';
/** How long the browser holds each API answer: inside the 0.8-1.5 s a loaded runner takes. */
const SLOW_MS = 1_200;
/** The list's refresh of its first page, newest first, no filter (list.js). */
const LIST_REFRESH = '/api/campaigns?limit=50&offset=0&sort=created';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';
let browser: Browser;
let page: Page;
let campaignId = '';
const slow = { ms: 0, inFlight: 0 };

beforeAll(async () => {
	base = await startApi(runner);
	// Scheduled a day ahead: listed with a link, and nothing sent.
	const created = await fetch(`${base}/api/campaigns`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			name: 'Routed',
			template_id: positionalTemplate(runner.business).id,
			from: runner.business.phoneNumbers[0],
			at: new Date(Date.now() + 86_400_000).toISOString(),
			recipients: [{ phone: '+4917180000001', 1: 'Ana', 2: '#1' }],
		}),
	});
	campaignId = ((await created.json()) as { id: string }).id;
	browser = await launchChromium();
	({ page } = await consolePage(browser, base, TOKEN, { width: 1300, height: 900 }));
	await page.route('**/api/**', async (route) => {
		slow.inFlight++;
		try {
			if (slow.ms) await new Promise((resolve) => setTimeout(resolve, slow.ms));
			await route.continue();
		} finally {
			slow.inFlight--;
		}
	});
});
afterAll(async () => {
	await browser?.close();
});

/** The list's next refresh, once the browser has sent it (its answer held for SLOW_MS). */
async function listRefreshOnItsWay(): Promise<Request> {
	return page.waitForRequest((request) => request.url().endsWith(LIST_REFRESH), { timeout: 10_000 });
}

/** Every held answer delivered and the page's scripts run on it. */
async function answersSettled(): Promise<void> {
	await waitFor('the held API answers to arrive', async () => slow.inFlight === 0, 10_000, 50);
	await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

test('New campaign clicked while the list refreshes stays on the form; the next click still navigates', async () => {
	await page.getByTestId('campaign-row').waitFor();
	slow.ms = SLOW_MS;
	await listRefreshOnItsWay();
	await page.getByTestId('new-campaign').click();
	await page.getByTestId('create-form').waitFor();
	await answersSettled();

	expect(new URL(page.url()).hash).toBe('#/new');
	expect(await page.getByTestId('create-form').isVisible()).toBe(true);
	expect(await page.getByTestId('campaign-row').count()).toBe(0);

	await page.getByRole('link', { name: 'Back' }).click();
	await page.getByTestId('campaign-row').waitFor();
	expect(new URL(page.url()).hash).toBe('#/');
	slow.ms = 0;
	await answersSettled();
});

test("A campaign clicked while the list refreshes shows the campaign's page, not the list", async () => {
	await page.getByTestId('campaign-row').waitFor();
	slow.ms = SLOW_MS;
	await listRefreshOnItsWay();
	await page.getByTestId('campaign-link').first().click();
	// The page's first refresh (held too) names the campaign: then the list's late answer has arrived as well.
	await page
		.getByTestId('campaign-title')
		.filter({ hasText: `Routed (${campaignId})` })
		.waitFor({ timeout: 10_000 });
	await answersSettled();

	expect(new URL(page.url()).hash).toBe(`#/campaigns/${campaignId}`);
	expect(await page.getByTestId('campaign-row').count()).toBe(0);
	expect(await page.getByTestId('campaign-title').textContent()).toBe(`Routed (${campaignId})`);

	await page.getByRole('link', { name: 'New campaign' }).first().click();
	await page.getByTestId('create-form').waitFor();
	slow.ms = 0;
	await answersSettled();
});
