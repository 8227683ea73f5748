/**
 * The console's operations pages in a real browser (Debian's Chromium driven by playwright-core) at
 * 1280 px and at 390 px (a phone), against a running `convo-runner start`, real Redis and the
 * sandbox. Webhooks: one added through the form (a wrong URL refused first, named by its label),
 * its secret shown once and checked against a test delivery a local receiver got, that delivery
 * shown with the receiver's status, then removed after the confirmation. Reindex: a run checked as
 * a dry run (the deactivation guard says it would stop), then started for real with the guard
 * overridden, followed to its report, as the sandbox holds the collection. Runners: this runner
 * process with its queues and their depths. Every page: no serious accessibility violation, no
 * sideways scroll, no CSP refusal.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Browser, Page } from 'playwright-core';

import { SIGNATURE_HEADER, verifyDelivery, type RunnerEvent } from 'convo-contract';
import { createReindex } from '../../runner/src/core/reindex';
import { consolePage, guideShot, launchChromium, seriousAccessibilityViolations, SHOTS } from './consoleSupport';
import {
	activeIds,
	collectionOf,
	FEED_DIR,
	feedText,
	freshCollection,
	products,
	range,
	settled,
	writeFeed,
} from './reindexSupport';
import { apiCaller, startApi, useRunnerUnderTest, waitFor, waitForEventsDelivered } from './support';

jest.setTimeout(300_000);

const TOKEN = 'console-operations-token-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_SOURCE_DIR: FEED_DIR });
let base = '';
let browser: Browser;

/** What the local receiver got: each delivery's event, with its signature header and raw body. */
interface Received {
	event: RunnerEvent;
	signature: string | undefined;
	body: string;
}
const received: Received[] = [];
/** The receiver's answer: a status no runner would make up, so the page shows the receiver's own. */
const RECEIVER_STATUS = 202;
let receiverUrl = '';
let closeReceiver = async () => undefined as void;

beforeAll(async () => {
	base = await startApi(runner);
	browser = await launchChromium();
	const server = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', () => {
			const signature = request.headers[SIGNATURE_HEADER];
			received.push({ event: JSON.parse(body) as RunnerEvent, signature: signature as string | undefined, body });
			response.writeHead(RECEIVER_STATUS).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
	closeReceiver = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
	await browser?.close();
	await closeReceiver();
});

const call = apiCaller(() => base, TOKEN);

async function api(path: string): Promise<Record<string, unknown>> {
	return (await call('GET', path)).json as Record<string, unknown>;
}

/** What every page must be: usable by assistive tools, and never wider than the window. */
async function checkPage(page: Page): Promise<void> {
	expect(await page.locator('html').evaluate((root) => root.scrollWidth - root.clientWidth)).toBe(0);
	expect(await seriousAccessibilityViolations(page)).toEqual([]);
}

/** Waits until `testid` in `page` says exactly `text` (answers come back from the runner in their time). */
async function says(page: Page, testid: string, text: string): Promise<void> {
	const element = page.getByTestId(testid);
	await waitFor(`${testid} to say "${text}"`, async () => (await element.textContent()) === text, 30_000, 100).catch(
		async (error: Error) => {
			throw new Error(`${error.message}; it says "${await element.textContent()}"`);
		},
	);
}

/** Opens a page of the console by its link in the header, as an operator does. */
async function navigate(page: Page, name: string, heading: string): Promise<void> {
	await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
	await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
	expect(await page.getByRole('link', { name, exact: true }).getAttribute('aria-current')).toBe('page');
}

describe.each([
	['1280', { width: 1280, height: 900 }],
	['390', { width: 390, height: 844 }],
])('at %s px', (width, viewport) => {
	test('webhooks: added, a test delivery received and shown with its status, removed', async () => {
		const { page, violations } = await consolePage(browser, base, TOKEN, viewport);
		await navigate(page, 'Webhooks', 'Webhooks');
		await page.getByTestId('webhook-none').waitFor();

		// The runner's refusal, named as the form labels the field.
		await page.getByLabel('URL', { exact: true }).fill('ftp://hooks.example.com/convo');
		await page.getByLabel(/^campaign\.finished/).check();
		await page.getByTestId('webhook-add').click();
		await says(page, 'webhook-error', 'URL must be an http(s) URL');

		await page.getByLabel('URL', { exact: true }).fill(receiverUrl);
		await page.getByLabel(/^reindex\.finished/).check();
		await page.getByLabel('Description').fill(`console at ${width} px`);
		await page.getByTestId('webhook-add').click();
		const secret = await page.getByLabel('Signing secret').inputValue();
		expect(secret).toMatch(/^[0-9a-f]{64}$/);
		const row = page.getByTestId('webhook-row');
		await row.waitFor();
		expect(await row.getByTestId('webhook-row-url').textContent()).toBe(receiverUrl);
		expect(await row.getByTestId('webhook-row-events').textContent()).toBe('campaign.finishedreindex.finished');
		expect(await row.getByTestId('state').textContent()).toBe('enabled');
		await checkPage(page);
		// Shown once: gone with Done, and no refresh brings it back.
		await page.getByTestId('webhook-secret-done').click();
		await page.waitForTimeout(2_500);
		expect(await page.content()).not.toContain(secret);
		const { webhooks } = (await api('/api/webhooks')) as { webhooks: Array<{ id: string }> };
		expect(webhooks).toHaveLength(1);
		const id = webhooks[0].id;

		// The test event: through the runner's queue to the receiver, signed with the secret shown.
		await row.getByTestId('webhook-test').click();
		await page.waitForURL(`**/#/webhooks/${id}`);
		const delivery = page.getByTestId('delivery-row');
		await delivery.waitFor({ timeout: 30_000 });
		expect(await delivery.getByTestId('delivery-outcome').textContent()).toBe('delivered');
		expect(await delivery.getByTestId('delivery-status').textContent()).toBe(String(RECEIVER_STATUS));
		const got = received.filter((r) => r.event.type === 'webhook.test' && r.event.data.webhook === id);
		expect(got).toHaveLength(1);
		expect(verifyDelivery(got[0].signature, got[0].body, secret).ok).toBe(true);
		expect(await delivery.textContent()).toContain(got[0].event.id);
		await checkPage(page);
		await page.screenshot({ path: `${SHOTS}/console-webhooks-${width}.png`, fullPage: true });
		if (width === '1280') await guideShot(page, 'webhooks');

		// Removed after the confirmation, which can be declined.
		await row.getByTestId('webhook-remove').click();
		await page.getByTestId('confirm-dismiss').click();
		expect(await row.count()).toBe(1);
		await row.getByTestId('webhook-remove').click();
		expect(await page.getByTestId('confirm-text').textContent()).toContain(receiverUrl);
		await page.getByTestId('confirm-ok').click();
		await page.getByTestId('webhook-none').waitFor();
		await says(page, 'webhook-message', `${receiverUrl} removed.`);
		expect(new URL(page.url()).hash).toBe('#/webhooks');
		expect(((await api('/api/webhooks')) as { total: number }).total).toBe(0);
		expect(violations).toEqual([]);
		await page.context().close();
	});

	test('reindex: a dry run shows the guard stopping it; started with the guard overridden, followed to its report', async () => {
		// The collection as a first run left it: p0..p19 sent by the runner.
		await freshCollection(runner);
		const first = await createReindex(runner.context, {
			collection: collectionOf(runner),
			source: writeFeed(feedText(products(range(0, 20)), 'ndjson'), 'feed.ndjson'),
			idField: 'sku',
			rate: 1000,
		});
		if (first.kind !== 'run') throw new Error('expected a run');
		await settled(runner.context, first.status.id);
		const before = await activeIds(runner);
		// A feed that lacks half of them: deactivating what it lacks is more than the guard's 10%.
		const half = writeFeed(feedText(products(range(0, 10)), 'ndjson'), 'half.ndjson');

		const { page, violations } = await consolePage(browser, base, TOKEN, viewport);
		await navigate(page, 'Reindex', 'Reindex runs');
		await page.getByTestId('reindex-run-row').first().waitFor();

		// The runner's refusal, named as the form labels the field.
		await page.getByLabel('Collection id').fill('not-a-uuid');
		await page.getByLabel('Source', { exact: true }).fill(half);
		await page.getByLabel('Id field').fill('sku');
		await page.getByTestId('reindex-dry-run-button').click();
		await says(page, 'reindex-error', 'Collection id must be the UUID of a search collection');

		await page.getByLabel('Collection id').fill(collectionOf(runner));
		await page.getByLabel('Rate (upserts per second)').fill('1000');
		await page.getByLabel('Deactivate missing items').check();
		// The guard is explained where it is set.
		expect(await page.getByTestId('reindex-guard').textContent()).toContain('deactivates nothing and fails');
		expect(await page.getByLabel('Deactivate at most').inputValue()).toBe('10%');
		await page.getByTestId('reindex-dry-run-button').click();
		const dry = page.getByTestId('reindex-dry-run');
		await dry.waitFor();
		expect(await page.getByTestId('reindex-dry-counts').textContent()).toContain('10 read');
		expect(await page.getByTestId('reindex-dry-guard').textContent()).toMatch(
			/^Guard: would stop\. .*more than the 10% allowed \(Deactivate at most\).*Override the guard/,
		);
		// Nothing written: the collection is as it was.
		expect(await activeIds(runner)).toEqual(before);
		await checkPage(page);
		await page.screenshot({ path: `${SHOTS}/console-reindex-${width}.png`, fullPage: true });
		if (width === '1280') await guideShot(page, 'reindex');

		await page.getByLabel('Override the guard').check();
		await page.getByTestId('reindex-start').click();
		await page.waitForURL(/#\/reindex\/r[A-Za-z0-9_-]+$/);
		const runId = page.url().split('/').pop() as string;
		await waitFor(
			'the run to end in its page',
			async () => (await page.getByTestId('reindex-state').textContent()) === 'completed',
			90_000,
			250,
		);
		expect(await page.getByTestId('reindex-count-read').textContent()).toBe('10');
		expect(await page.getByTestId('reindex-count-deactivated').textContent()).toBe('10');
		expect(await page.getByTestId('reindex-deactivation').textContent()).toMatch(/^Deactivation: done: 10 deactivated/);
		expect(await page.getByTestId('reindex-report').textContent()).toContain('Rejected rows');
		// As the sandbox holds it: the ten the feed lacks are no longer active.
		const after = await activeIds(runner);
		expect(before.filter((sku) => !after.includes(sku)).sort()).toEqual(
			range(10, 20)
				.map((i) => `p${i}`)
				.sort(),
		);
		await checkPage(page);
		await page.screenshot({ path: `${SHOTS}/console-reindex-run-${width}.png`, fullPage: true });
		if (width === '1280') await guideShot(page, 'reindex-run');

		// Back in the list, the run with its counts.
		await page.getByRole('link', { name: '← Reindex runs' }).click();
		const listed = page.locator(`[data-testid="reindex-run-row"][data-id="${runId}"]`);
		await listed.waitFor();
		expect(await listed.getByTestId('reindex-run-counts').textContent()).toContain('10 deactivated');
		expect(violations).toEqual([]);
		await page.context().close();
	});

	test('reindex: a cron schedule listed with its source, collection and creation; removed once asked', async () => {
		const source = writeFeed(feedText(products(range(0, 2)), 'ndjson'), 'yearly.ndjson');
		const created = await createReindex(runner.context, {
			collection: collectionOf(runner),
			source,
			idField: 'sku',
			cron: '0 0 1 1 *',
		});
		if (created.kind !== 'schedule') throw new Error('expected a schedule');
		const { id, created_at } = created.schedule;

		const { page, violations } = await consolePage(browser, base, TOKEN, viewport);
		await navigate(page, 'Reindex', 'Reindex runs');
		const row = page.locator(`[data-testid="schedule-row"][data-id="${id}"]`);
		await row.waitFor();
		expect(await row.textContent()).toContain(source);
		expect(await row.textContent()).toContain(collectionOf(runner));
		expect(await row.locator('time').getAttribute('datetime')).toBe(created_at);

		await row.getByTestId('schedule-remove').click();
		expect(await page.getByTestId('confirm-title').textContent()).toBe('Remove this reindex schedule?');
		await page.getByTestId('confirm-ok').click();
		await row.waitFor({ state: 'detached' });
		expect(((await api('/api/reindex')) as { schedules: Array<{ id: string }> }).schedules).toEqual([]);
		expect(violations).toEqual([]);
		await page.context().close();
	});

	test('runners: this runner process with its queues, and each queue with its depth', async () => {
		// A delivery made and kept (an hour) in the events queue: a depth the page must show.
		const hook = await call('POST', '/api/webhooks', { url: receiverUrl, events: ['campaign.paused'] });
		const id = (hook.json as { id: string }).id;
		expect((await call('POST', `/api/webhooks/${id}/test`)).status).toBe(202);
		await waitForEventsDelivered(runner.context);
		expect((await call('DELETE', `/api/webhooks/${id}`)).status).toBe(204);

		const { page, violations } = await consolePage(browser, base, TOKEN, viewport);
		await navigate(page, 'Runners', 'Runners');
		const process = page.getByTestId('runner-row');
		await process.waitFor();
		expect(await process.count()).toBe(1);
		expect(await process.getByTestId('runner-role').textContent()).toBe('start');
		expect(await process.getByTestId('runner-pid').textContent()).toBe(String(runner.processes[0].child.pid));
		expect(await page.getByTestId('runners-summary').textContent()).toBe(
			'1 runner process alive on this Redis and prefix.',
		);
		const queue = (name: string) => page.locator(`[data-testid="queue-row"][data-name="${name}"]`);
		for (const name of ['control', 'reindex', 'events', 'tracking']) {
			expect(await process.getByTestId('runner-queues').textContent()).toContain(name);
			expect(await queue(name).getByTestId('queue-runners').textContent()).toBe('1 process');
		}
		const completed = Number(await queue('events').getByTestId('queue-completed').textContent());
		const kept = (await api('/api/queues')) as { queues: Array<{ name: string; completed: number }> };
		expect(completed).toBeGreaterThanOrEqual(1);
		expect(kept.queues.find((q) => q.name === 'events')?.completed).toBe(completed);
		await checkPage(page);
		await page.screenshot({ path: `${SHOTS}/console-runners-${width}.png`, fullPage: true });
		if (width === '1280') await guideShot(page, 'runners');
		expect(violations).toEqual([]);
		await page.context().close();
	});
});
