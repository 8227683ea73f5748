/**
 * The operator console in a real browser (Debian's Chromium driven by playwright-core) against a
 * running `convo-runner start`: sign-in refused with a wrong token; signed in, a 500-recipient
 * campaign's progress bar moves to done while the page is paused and resumed from its buttons;
 * the report downloads with one row per recipient. Screenshots go to .tmp/ (CI artifacts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Browser, Page } from 'playwright-core';

import { cspRefusals, launchChromium, SHOTS } from './consoleSupport';
import { collectionOf, FEED_DIR, feedText, products, range, writeFeed } from './reindexSupport';
import { positionalTemplate, setFault, templateSends, startApi, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(180_000);

const TOKEN = 'console-token-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_SOURCE_DIR: FEED_DIR });
let base = '';
let browser: Browser;

beforeAll(async () => {
	base = await startApi(runner);
	browser = await launchChromium();
});
afterAll(async () => {
	await browser?.close();
});

async function signIn(page: Page, token: string): Promise<void> {
	await page.goto(`${base}/`);
	await page.waitForURL(`${base}/login`);
	await page.getByTestId('token').fill(token);
	await page.getByTestId('sign-in').click();
}

test('a wrong token is refused at sign-in and the console stays closed', async () => {
	const context = await browser.newContext();
	const page = await context.newPage();
	await signIn(page, 'not-the-token-at-all');
	await page.getByTestId('sign-in-error').waitFor();
	expect(await page.getByTestId('sign-in-error').textContent()).toContain('not the runner token');
	expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain('convo_session');
	const api = await page.request.get(`${base}/api/campaigns`);
	expect(api.status()).toBe(401);
	await context.close();
});

test('signed in: watch a 500-recipient campaign to done, pause and resume it from its page, download the report', async () => {
	await setFault(runner.sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs: 20 });
	const phones = Array.from({ length: 500 }, (_, i) => `4917060${String(i).padStart(6, '0')}`);
	const created = await fetch(`${base}/api/campaigns`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			template_id: positionalTemplate(runner.business).id,
			from: runner.business.phoneNumbers[0],
			rate: 40,
			recipients: phones.map((phone, i) => ({ phone, 1: `Ana ${i}`, 2: `#${i}` })),
		}),
	});
	const { id } = (await created.json()) as { id: string };

	const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1200, height: 900 } });
	const page = await context.newPage();
	await signIn(page, TOKEN);
	// A reindex run is listed too, with its state and counts.
	await fetch(`${base}/api/reindex`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			collection_id: collectionOf(runner),
			source: writeFeed(feedText(products(range(0, 50)), 'ndjson'), 'feed.ndjson'),
			id_field: 'sku',
		}),
	});
	await page.getByTestId('campaign-row').first().waitFor();
	// The runner processes alive on this Redis and prefix (their heartbeats): here the one `start`.
	expect(await page.getByTestId('runners-alive').textContent()).toMatch(
		/^1 runner process alive: start on \S+ \(pid \d+\)$/,
	);
	await waitFor(
		'the reindex run to show as completed',
		async () => (await page.getByTestId('reindex-row').first().textContent())?.includes('completed') || undefined,
		30_000,
		250,
	);
	expect(await page.getByTestId('reindex-row').first().textContent()).toContain('50 read');
	const session = (await context.cookies()).find((cookie) => cookie.name === 'convo_session');
	expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
	expect(page.url()).not.toContain(TOKEN);
	expect(
		await page.evaluate(() => JSON.stringify((globalThis as unknown as { localStorage: unknown }).localStorage)),
	).not.toContain('console-token');
	await page.screenshot({ path: join(SHOTS, 'console-list.png') });

	await page.click(`a[href="#/campaigns/${id}"]`);
	const progress = page.getByTestId(`progress-${id}`);
	await progress.waitFor();
	await waitFor('the bar to move', async () => Number(await progress.getAttribute('aria-valuenow')) > 50, 30_000, 250);

	await page.getByTestId('pause').click();
	await waitFor(
		'the page to show paused',
		async () => (await page.getByTestId('state').textContent()) === 'paused',
		10_000,
		200,
	);
	const pausedAt = Date.now();
	await page.waitForTimeout(2500);
	const lateSends = (await templateSends(runner.sandbox)).filter(
		(message) => phones.includes(message.to) && Date.parse(message.createdAt) > pausedAt + 1000,
	);
	expect(lateSends).toEqual([]);
	await page.screenshot({ path: join(SHOTS, 'console-campaign-paused.png') });

	await page.getByTestId('resume').click();
	await waitFor(
		'the bar to reach the end',
		async () =>
			(await progress.getAttribute('aria-valuenow')) === '500' &&
			(await page.getByTestId('state').textContent()) === 'completed',
		60_000,
		500,
	);
	expect(await page.getByTestId('count-sent').textContent()).toBe('500');
	await page.screenshot({ path: join(SHOTS, 'console-campaign.png') });

	const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download').click()]);
	const file = join(SHOTS, download.suggestedFilename());
	await download.saveAs(file);
	const lines = readFileSync(file, 'utf8').trim().split('\n');
	expect(lines[0]).toBe(
		'line,phone,outcome,message_id,error,attempts,first_attempt_at,last_attempt_at,delivery,delivered_at,read_at,replied_at,delivery_error',
	);
	expect(lines).toHaveLength(501);
	const sends = new Map((await templateSends(runner.sandbox)).map((message) => [message.to, message.uuid]));
	for (const line of lines.slice(1)) {
		const [, phone, outcome, messageId] = line.split(',');
		expect({ phone, outcome, messageId }).toEqual({ phone, outcome: 'sent', messageId: sends.get(phone) });
	}
	await context.close();
});

test('under the security headers the console and the queue board load with no CSP violation; Sign out ends the session for good', async () => {
	const context = await browser.newContext();
	const page = await context.newPage();
	// bull-board's page asks Google Fonts for its typeface: blocked on purpose (no third-party request), it falls back to system fonts.
	const violations = cspRefusals(page);
	await signIn(page, TOKEN);
	await page.waitForURL(`${base}/`);
	await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
	const cookie = (await context.cookies()).find((entry) => entry.name === 'convo_session');
	expect(cookie).toBeDefined();
	await page.goto(`${base}/admin/queues`);
	await page.getByText('control', { exact: true }).first().waitFor();
	await page.goto(`${base}/`);
	await page.getByRole('button', { name: 'Sign out' }).click();
	await page.waitForURL(`${base}/login`);
	expect(violations).toEqual([]);
	// The cookie as it was before signing out, replayed: refused, not a session for 12 more hours.
	const replayed = await fetch(`${base}/api/campaigns`, { headers: { cookie: `convo_session=${cookie?.value}` } });
	expect(replayed.status).toBe(401);
	await context.close();
});
