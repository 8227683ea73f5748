/**
 * An A/B test in the console (#37), in a real browser against a running `convo-runner start`, real
 * Redis and the sandbox: made with the create form (a CSV upload, the template left empty, the
 * variants one a line), its dry run showing the split; a tie that waits shows the variants side by
 * side with the rule's figures, and the button of variant 2 sends the remainder that variant.
 * Counted in the sandbox's own log. No CSP refusal.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Browser } from 'playwright-core';

import { variantOf } from '../../runner/src/campaigns/variantSplit';
import { campaignStatus } from '../../runner/src/core/campaigns';
import { consolePage, launchChromium } from './consoleSupport';
import {
	sendsByPhone,
	setDelivery,
	startApi,
	templateSends,
	trackingTally,
	useRunnerUnderTest,
	waitFor,
} from './support';

jest.setTimeout(240_000);

const TOKEN = 'console-ab-token-0123456789abcdef';
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_TRACKING_SCHEDULE: '1s,2s',
	RUNNER_TRACKING_RATE: '1000',
});
let base = '';
let browser: Browser | undefined;

beforeAll(async () => {
	base = await startApi(runner, {
		CONVO_BASE_URL: runner.sandbox.baseUrl,
		CONVO_ACCESS_TOKEN: runner.business.accessToken,
	});
	browser = await launchChromium();
});
afterAll(async () => {
	await browser?.close();
});

test('the create form makes an A/B test; a tie waits with the variants side by side; the variant 2 button sends the remainder', async () => {
	const [first, second] = ['order_update', 'welcome_named'].map(
		(name) => runner.business.templates.find((t) => t.name === name)?.id ?? '',
	);
	// Equal outcomes: every message of either template is read, so the rule ties.
	await setDelivery(runner.sandbox, {
		seed: 'console-ab',
		delivered: 1,
		read: 1,
		delays_ms: { sent: 50, delivered: 100, read: 200 },
	});
	const phones = Array.from({ length: 200 }, (_, i) => `4917657${String(i).padStart(6, '0')}`);
	const dir = mkdtempSync(join(tmpdir(), 'console-ab-'));
	const csv = join(dir, 'recipients.csv');
	writeFileSync(
		csv,
		`${['phone,1,2,first_name,order_id', ...phones.map((phone, i) => `+${phone},C${i},o${i},N${i},O${i}`)].join('\n')}\n`,
	);

	const { page, violations } = await consolePage(browser as Browser, base, TOKEN, { width: 1300, height: 1000 });
	await page.getByTestId('new-campaign').click();
	await page.getByTestId('create-form').waitFor();
	await page.getByTestId('create-file').setInputFiles(csv);
	await page.getByTestId('create-from').fill(runner.business.phoneNumbers[0]);
	await page.getByTestId('create-rate').fill('100');
	await page.getByTestId('create-ab').locator('summary').click();
	await page.getByTestId('create-variants').fill(`${first}:1,2\n${second}:first_name,order_id`);
	await page.getByTestId('create-test-share').fill('50%');
	await page.getByTestId('create-decide-after').fill('60s');
	await page.getByTestId('create-if-tie').selectOption('wait');

	await page.getByTestId('create-dry-run').click();
	const split = (await page.getByTestId('dry-run-split').textContent()) ?? '';
	const seed = /seed ([0-9a-f]+)/.exec(split)?.[1] ?? '';
	const drawn = phones.map((phone) => variantOf({ seed, share: 0.5, variants: 2 }, phone));
	const counts = [1, 2].map((v) => drawn.filter((d) => d === v - 1).length);
	expect(split).toContain(`variant 1 ${counts[0]}, variant 2 ${counts[1]}, remainder ${200 - counts[0] - counts[1]}`);

	// The dry run's seed is in the form now: the create splits alike.
	expect(await page.getByTestId('create-seed').inputValue()).toBe(seed);
	await page.getByTestId('create-submit').click();
	await page.waitForURL(/#\/campaigns\/c/);
	const id = /#\/campaigns\/(\S+)$/.exec(page.url())?.[1] ?? '';
	await waitFor(
		'the tie to wait',
		async () => ((await page.getByTestId('ab-phase').textContent()) ?? '').startsWith('Tied'),
		90_000,
		250,
	);
	const testCount =
		Number(await page.getByTestId('ab-in-the-test-1').textContent()) +
		Number(await page.getByTestId('ab-in-the-test-2').textContent());
	// With the runner's own view and the tracking records beside the page's figures, so a failure says why.
	const seen = {
		read: [
			await page.getByTestId('ab-rate-read-1').textContent(),
			await page.getByTestId('ab-rate-read-2').textContent(),
		],
		abTest: (await campaignStatus(runner.context, id)).ab_test,
		...(await trackingTally(runner.context, id)),
	};
	// toEqual, not toMatchObject: its diff prints the whole object, the runner's view included.
	expect(seen).toEqual({ ...seen, read: ['100.0%', '100.0%'] });
	expect(await page.getByTestId('ab-z-1').textContent()).toBe('leader');
	expect(await page.getByTestId('ab-z-2').textContent()).toBe('0.00');
	expect(await page.getByTestId('ab-rule').textContent()).toContain('critical z 1.96');
	const mine = async () => (await templateSends(runner.sandbox)).filter((m) => m.to.startsWith('4917657'));
	expect(await mine()).toHaveLength(testCount);

	await page.getByTestId('ab-choose-2').click();
	await waitFor(
		'the remainder sent',
		async () => (await page.getByTestId('state').textContent()) === 'completed' || undefined,
		60_000,
		250,
	);
	expect(await page.getByTestId('ab-phase').textContent()).toMatch(/^Decided: variant 2 \(operator\)/);
	expect(await page.getByTestId('ab-choose-1').isDisabled()).toBe(true);
	const byPhone = sendsByPhone(await mine());
	const wrong = phones.filter((phone, i) => {
		const got = byPhone.get(phone) ?? [];
		const want = drawn[i] === undefined ? second : [first, second][drawn[i] as number];
		return got.length !== 1 || got[0].template?.id !== want;
	});
	expect(wrong).toEqual([]);
	expect(id).not.toBe('');
	expect(violations).toEqual([]);
});
