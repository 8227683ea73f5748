/**
 * The console's Schedules page in a real browser (Debian's Chromium driven by playwright-core)
 * against a running `convo-runner start`: schedules created through the core, one of which has
 * fired once; each shown with its pattern, zone and next run, its runs linked to their pages and
 * its funnel across them; paused, resumed and removed from the page, as the core then reads them;
 * at 1280 px and at 390 px (a phone: cards, no sideways scroll), with the accessibility check and
 * no CSP refusal.
 */
import { getNextMillis } from 'bullmq';
import type { Browser } from 'playwright-core';

import { campaignStatus, createCampaign, listSchedules } from '../../runner/src/core/campaigns';
import {
	consolePage,
	guideShot,
	isCard,
	launchChromium,
	PHONE,
	seriousAccessibilityViolations,
	SHOTS,
	sideways,
	withinWidth,
} from './consoleSupport';
import { positionalTemplate, startApi, useRunnerUnderTest, waitFor, writeRecipientsCsv } from './support';

jest.setTimeout(180_000);

const TOKEN = 'console-schedules-token-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';
let browser: Browser;
/** Fired once, a few seconds after the start: its run is on the page with its funnel. */
let fired = '';
let firedRun = '';
/** Every Monday at 9:00 in Berlin: never fires during the test. */
let weekly = '';
/** Removed at 390 px. */
let spare = '';
const WEEKLY = { cron: '0 9 * * 1', tz: 'Europe/Berlin' };
const RECIPIENTS = 2;

async function schedule(name: string, source: string, cron: string, tz?: string): Promise<string> {
	const created = await createCampaign(runner.context, {
		name,
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source,
		cron,
		tz,
	});
	if (created.kind !== 'schedule') throw new Error('expected a schedule');
	return created.schedule.id;
}

beforeAll(async () => {
	base = await startApi(runner);
	browser = await launchChromium();
	const { path } = writeRecipientsCsv(RECIPIENTS, { seed: 43 });
	// One time, 3 to 4 s from now, named to its day and month (UTC): the next after it is a year later.
	const at = new Date((Math.floor(Date.now() / 1000) + 4) * 1000);
	const once = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
	fired = await schedule('Fired once', path, once);
	weekly = await schedule('Monday mornings', path, WEEKLY.cron, WEEKLY.tz);
	spare = await schedule('Spare', path, '0 0 1 1 *');
	const run = await waitFor(
		'the first firing to send',
		async () => {
			const [listed] = (await listSchedules(runner.context)).filter((s) => s.id === fired);
			return listed?.runs[0] && (await campaignStatus(runner.context, listed.runs[0].id)).state === 'completed'
				? listed.runs[0].id
				: undefined;
		},
		60_000,
		200,
	);
	firedRun = run;
});
afterAll(async () => {
	await browser?.close();
});

async function stateOf(id: string): Promise<string | undefined> {
	return (await listSchedules(runner.context)).find((s) => s.id === id)?.state;
}

test('at 1280 px: next run, runs linked, funnel across runs; pause and resume from the page', async () => {
	const { page, violations } = await consolePage(browser, base, TOKEN, { width: 1280, height: 900 });
	await page.getByRole('link', { name: 'Schedules' }).click();
	const weeklyCard = page.getByTestId(`schedule-${weekly}`);
	await weeklyCard.waitFor();
	expect(new URL(page.url()).hash).toBe('#/schedules');
	// Newest first, each named.
	expect(await page.getByTestId('schedule-name').allTextContents()).toEqual(['Spare', 'Monday mornings', 'Fired once']);

	// The pattern in its zone; the next run the time BullMQ's parser names for it, counted down.
	expect(await weeklyCard.getByTestId('schedule-cron').textContent()).toBe('0 9 * * 1 in Europe/Berlin');
	const next = weeklyCard.getByTestId('schedule-next');
	expect(await next.locator('time').getAttribute('datetime')).toBe(
		new Date(getNextMillis(Date.now(), { pattern: WEEKLY.cron, tz: WEEKLY.tz }) as number).toISOString(),
	);
	expect(await weeklyCard.getByTestId('schedule-countdown').textContent()).toMatch(/^in \d+ (d|h|min|s)\b/);
	expect(await weeklyCard.getByTestId('schedule-template').textContent()).toBe(positionalTemplate(runner.business).id);
	const created = await weeklyCard.getByTestId('schedule-created').locator('time').getAttribute('datetime');
	expect(Date.now() - Date.parse(created ?? '')).toBeLessThan(10 * 60_000);
	expect(await weeklyCard.getByTestId('state').textContent()).toBe('active');
	expect(await weeklyCard.getByTestId('schedule-no-runs').textContent()).toBe('No run yet.');

	// The fired schedule: its run linked to its page, its funnel the run's.
	const firedCard = page.getByTestId(`schedule-${fired}`);
	expect(await firedCard.getByTestId('schedule-runs-heading').textContent()).toBe('Runs (1)');
	expect(await firedCard.getByTestId('schedule-run-link').getAttribute('href')).toBe(`#/campaigns/${firedRun}`);
	expect(await firedCard.getByTestId('funnel-audience-count').textContent()).toBe(String(RECIPIENTS));
	expect(await firedCard.getByTestId('funnel-sent-count').textContent()).toBe(String(RECIPIENTS));
	expect(await sideways(page)).toBe(0);
	expect(await seriousAccessibilityViolations(page)).toEqual([]);
	await page.screenshot({ path: `${SHOTS}/console-schedules-1280.png`, fullPage: true });
	await guideShot(page, 'schedules');

	// Paused from the page: the core reads it paused, and the page says there is no next run.
	const pause = weeklyCard.getByTestId('schedule-pause');
	const resume = weeklyCard.getByTestId('schedule-resume');
	expect(await resume.isDisabled()).toBe(true);
	await pause.click();
	await weeklyCard.getByTestId('state').filter({ hasText: 'paused' }).waitFor();
	expect(await stateOf(weekly)).toBe('paused');
	expect(await next.textContent()).toMatch(/^none while paused \(since .+\)$/);
	expect(await page.getByTestId('schedule-message').textContent()).toBe(
		'Schedule "Monday mornings" paused: it starts no campaign until resumed.',
	);
	expect(await pause.isDisabled()).toBe(true);
	// Resumed by keyboard: the focused button keeps its focus through the refresh.
	await resume.focus();
	await page.keyboard.press('Enter');
	await weeklyCard.getByTestId('state').filter({ hasText: 'active' }).waitFor();
	expect(await stateOf(weekly)).toBe('active');
	await next.locator('time').waitFor();
	expect(await page.getByTestId('schedule-message').textContent()).toMatch(
		/^Schedule "Monday mornings" resumed: next run .+\.$/,
	);

	// A run's link opens its campaign's page.
	await firedCard.getByTestId('schedule-run-link').click();
	await page.getByTestId('campaign-title').filter({ hasText: firedRun }).waitFor();
	expect(violations).toEqual([]);
	await page.context().close();
});

test('at 390 px: cards without sideways scroll, every action reachable; remove asks first', async () => {
	const { page, violations } = await consolePage(browser, base, TOKEN, PHONE);
	await page.goto(`${base}/#/schedules`);
	const spareCard = page.getByTestId(`schedule-${spare}`);
	await spareCard.waitFor();
	expect(await sideways(page)).toBe(0);
	// The runs table's rows are cards: each cell a line under the one before, named by its column.
	const run = page.getByTestId(`schedule-${fired}`).getByTestId('schedule-run');
	expect(await isCard(run)).toBe(true);
	expect(await withinWidth(run, PHONE.width)).toBe(true);
	for (const action of ['schedule-pause', 'schedule-resume', 'schedule-remove'])
		expect([action, await withinWidth(spareCard.getByTestId(action), PHONE.width)]).toEqual([action, true]);
	expect(await seriousAccessibilityViolations(page)).toEqual([]);

	await spareCard.getByTestId('schedule-pause').click();
	await spareCard.getByTestId('state').filter({ hasText: 'paused' }).waitFor();
	await spareCard.getByTestId('schedule-resume').click();
	await spareCard.getByTestId('state').filter({ hasText: 'active' }).waitFor();
	expect(await stateOf(spare)).toBe('active');

	// Remove asks in the page; kept, then removed.
	await spareCard.getByTestId('schedule-remove').click();
	expect(await page.getByTestId('confirm-title').textContent()).toBe('Remove this schedule?');
	expect(await page.getByTestId('confirm-text').textContent()).toBe(
		'It starts no more campaigns. The 0 campaigns it started stay. This cannot be undone.',
	);
	await page.getByTestId('confirm-dismiss').click();
	expect(await stateOf(spare)).toBe('active');
	await page.screenshot({ path: `${SHOTS}/console-schedules-390.png`, fullPage: true });
	await spareCard.getByTestId('schedule-remove').click();
	await page.getByTestId('confirm-ok').click();
	await spareCard.waitFor({ state: 'detached' });
	expect(await stateOf(spare)).toBeUndefined();
	expect(await page.getByTestId('schedule-name').allTextContents()).toEqual(['Monday mornings', 'Fired once']);
	expect(await sideways(page)).toBe(0);
	expect(violations).toEqual([]);
	await page.context().close();
});
