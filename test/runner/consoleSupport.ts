/**
 * The console's browser tests' common parts: Debian's Chromium driven by playwright-core, a page
 * signed in with the runner token, the CSP refusals the page met, an accessibility check (axe-core),
 * and where screenshots go (.tmp/, which CI keeps; the console guide's pictures in docs/public/console/).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SHOTS = join(__dirname, '..', '..', '.tmp');
/**
 * The console guide's pictures (docs/guide/console.md shows them as /console/<name>.png), written
 * there when CONVO_DOCS_SHOTS=1, else beside the other screenshots: a plain test run leaves the
 * checkout as it was (the pictures hold ids and times that change on every run).
 */
const GUIDE_SHOTS =
	process.env.CONVO_DOCS_SHOTS === '1'
		? join(__dirname, '..', '..', 'docs', 'public', 'console')
		: join(SHOTS, 'console-guide');

/** A headless Chromium; the screenshot folder made. */
export async function launchChromium(): Promise<Browser> {
	if (!existsSync(CHROMIUM))
		throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
	mkdirSync(SHOTS, { recursive: true });
	return chromium.launch({
		executablePath: CHROMIUM,
		args: [
			'--headless',
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
	});
}

/** Signs in at the console's page with `token` (refused or not: the caller looks). */
export async function signIn(page: Page, base: string, token: string): Promise<void> {
	await page.goto(`${base}/login`);
	await page.getByTestId('token').fill(token);
	await page.getByTestId('sign-in').click();
}

/**
 * What the browser refuses under the server's CSP on `page`, as it happens. bull-board asks Google
 * Fonts for its typeface: blocked on purpose, so not counted (console.test.ts checks the block).
 */
export function cspRefusals(page: Page): string[] {
	const refusals: string[] = [];
	page.on('console', (message) => {
		if (
			/Content Security Policy|Refused to/i.test(message.text()) &&
			!message.text().includes('https://fonts.googleapis.com/')
		)
			refusals.push(message.text());
	});
	return refusals;
}

/** A new page of `browser` at `viewport`, signed in at `base` and showing the campaign list, with its CSP refusals. */
export async function consolePage(
	browser: Browser,
	base: string,
	token: string,
	viewport: { width: number; height: number },
): Promise<{ page: Page; violations: string[] }> {
	const page = await (await browser.newContext({ viewport, acceptDownloads: true })).newPage();
	const violations = cspRefusals(page);
	await signIn(page, base, token);
	await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
	return { page, violations };
}

/** Saves what `page` shows as the console guide's picture `name`: taken on every run, so taking it stays tested. */
export async function guideShot(page: Page, name: string): Promise<void> {
	mkdirSync(GUIDE_SHOTS, { recursive: true });
	await page.screenshot({ path: join(GUIDE_SHOTS, `${name}.png`), fullPage: true });
}

/** The axe-core build, read once: evaluated in the page, since the console's CSP refuses injected scripts. */
let axeSource: string | undefined;

interface AxeViolation {
	id: string;
	impact?: string | null;
	help: string;
	nodes: Array<{ target: unknown[] }>;
}

/**
 * What axe-core (WCAG 2.1 A and AA rules) finds serious or critical on what `page` shows now, one
 * line each: the rule, its help and the elements it names. An empty list is a pass.
 */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
	axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
	// DevTools evaluation is not subject to the page's CSP, so axe runs in the page as the console ships.
	await page.evaluate(axeSource);
	const violations = await page.evaluate(async () => {
		// The page's globals, typed here: the tests compile without the DOM's types.
		const scope = globalThis as unknown as {
			axe: { run: (context: unknown, options: unknown) => Promise<{ violations: AxeViolation[] }> };
			document: unknown;
		};
		const result = await scope.axe.run(scope.document, {
			runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
		});
		return result.violations;
	});
	return violations
		.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
		.map(
			(violation) =>
				`${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes
					.slice(0, 3)
					.map((node) => JSON.stringify(node.target))
					.join(', ')})`,
		);
}

/** A phone's window, as the console's narrow layout is tested at. */
export const PHONE = { width: 390, height: 844 };

/** The page's width beyond its window: 0 when nothing scrolls sideways. */
export function sideways(page: Page): Promise<number> {
	return page.locator('html').evaluate((root) => root.scrollWidth - root.clientWidth);
}

/** Whether `element` lies within the window's `width` (reached without scrolling sideways). */
export async function withinWidth(element: Locator, width: number): Promise<boolean> {
	const box = await element.boundingBox();
	return box !== null && box.width > 0 && box.x >= 0 && box.x + box.width <= width;
}

/** A table row shown as a card: its second cell under its first, named by its column (a label before it). */
export async function isCard(row: Locator): Promise<boolean> {
	const cells = row.locator('td');
	const [first, second] = [await cells.nth(0).boundingBox(), await cells.nth(1).boundingBox()];
	const label = await cells.nth(1).evaluate((cell) => {
		// The page's getComputedStyle, typed here: the tests compile without the DOM's types.
		const scope = globalThis as unknown as {
			getComputedStyle: (element: unknown, pseudo: string) => { content: string };
		};
		return scope.getComputedStyle(cell, '::before').content;
	});
	return (
		first !== null &&
		second !== null &&
		second.y >= first.y + first.height - 1 &&
		label !== 'none' &&
		label !== 'normal' &&
		label !== '""'
	);
}
