/**
 * "window", "run" and "place" keep one sense each in the runner, the sandbox and the nodes
 * (docs/architecture.md, Glossary): a window is a send window, a run a reindex run, a place a start
 * time on the number's clock (the daily budget counts customers). The send
 * window belongs to a known set of files, so "window" anywhere else is a new sense to name with
 * its own word (or, when it is a send window, a file to add below); and the words the other
 * senses once had are refused everywhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const DIRS = ['runner/src', 'sandbox/src', 'packages/n8n-nodes-convo/nodes'];
const TEXT = /\.(ts|js|lua|json|html|css)$/;

/** "window" in another sense on purpose: cut from a line before it is looked at. */
const OTHER_WINDOWS = [
	// The service's own term (SPEC A2), always in full; the sandbox's contacts inside it.
	/customer-care window/gi,
	/customerCareWindow|CUSTOMER_CARE_WINDOW/g,
	/\binWindow\b/g,
	// The browser's window, in the console's scripts.
	/\bwindow\.(ConvoConsole|uPlot|addEventListener)\b/g,
	// The old names of RUNNER_REPLY_PERIOD and RUNNER_AUTH_FAILURE_PERIOD, still read (config.ts).
	/\bRUNNER_(REPLY|AUTH_FAILURE)_WINDOW\b/g,
];

/** The files that deal with send windows: the only ones that say "window" otherwise. */
const SEND_WINDOW_FILES = [
	'packages/n8n-nodes-convo/nodes/Convo/actions/campaign/create.description.ts',
	'packages/n8n-nodes-convo/nodes/Convo/actions/campaign/create.rows.ts',
	'packages/n8n-nodes-convo/nodes/Convo/actions/campaign/getReport.operation.ts',
	'packages/n8n-nodes-convo/nodes/shared/runnerApi/campaign.ts',
	'runner/src/audience/windows.ts',
	'runner/src/campaigns/abTest.ts',
	'runner/src/campaigns/control.ts',
	'runner/src/campaigns/create.ts',
	'runner/src/campaigns/draft.ts',
	'runner/src/campaigns/schema.ts',
	'runner/src/campaigns/store.ts',
	'runner/src/campaigns/testSend.ts',
	'runner/src/cli/campaign.ts',
	'runner/src/config.ts',
	'runner/src/core/campaigns.ts',
	'runner/src/http/campaignRoutes.ts',
	'runner/src/http/console/create.js',
	'runner/src/http/console/shared.js',
	'runner/src/jobs.ts',
	'runner/src/keys.ts',
	'runner/src/ledger.ts',
	'runner/src/lua/applyChunk-6.lua',
	'runner/src/lua/commitCampaign-13.lua',
	'runner/src/lua/includes/jobClaim.lua',
	'runner/src/lua/start-11.lua',
	'runner/src/sending/feeder.ts',
	'runner/src/sending/send.ts',
	'runner/src/sending/spacing.ts',
];

/** What the other senses were called before they got words of their own: refused in every file. */
const RETIRED = [
	// The start gate's rate span, tracking's request limiter, the periods, the queue depth.
	/\b(rate|request|reply|failure|cap|sliding|job) windows?\b/i,
	/\bwindow('s)? (room|step)\b/i,
	/\bper window\b/i,
	/\bWINDOW_(MS|US|ROOM)\b|\bwindow(Ms|Rate|For)\b|\bRequestWindow\b|\brequestWindow/,
	// A send job's recipients, a schedule's firing, n8n's execution.
	/\bSEND_RUN\b|\bRUN_(OVER|DONE)\b|\b(startNextIn|openIn)Run\b|\brunClaim\b|\brunOver\b/,
	/\b(send|cron|scheduled) runs?\b/i,
	/\bschedule's runs\b|\beach run is a campaign\b|\bmanual runs?\b/i,
	// The daily budget's counted customers.
	/BudgetPlace|HoldingPlaces|budget\/places|budget\.places|\bplaces? (used|left|frees)\b|next place (frees|at)\b/i,
];

function textFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return ['node_modules', 'dist'].includes(entry.name) ? [] : textFiles(path);
		return TEXT.test(entry.name) ? [path] : [];
	});
}

/** `file:line: text` for each line that says "window" outside the send window's files, or a retired word. */
function misuses(file: string, text: string): string[] {
	const sendWindowFile = SEND_WINDOW_FILES.includes(file);
	return text.split('\n').flatMap((line, i) => {
		const rest = OTHER_WINDOWS.reduce((cut, sense) => cut.replace(sense, ''), line);
		const stray = !sendWindowFile && /window/i.test(rest);
		const retired = RETIRED.some((word) => word.test(line));
		return stray || retired ? [`${file}:${i + 1}: ${line.trim()}`] : [];
	});
}

const files = DIRS.flatMap((dir) => textFiles(join(ROOT, dir))).map((path) => ({
	file: relative(ROOT, path),
	text: readFileSync(path, 'utf8'),
}));

test('"window" is said only where send windows are handled, and no retired word of another sense is used', () => {
	expect(files.flatMap(({ file, text }) => misuses(file, text))).toEqual([]);
});

test('every file of the send window list still says "window" (a file that no longer does leaves the list)', () => {
	const saying = new Set(files.filter(({ text }) => /window/i.test(text)).map(({ file }) => file));
	expect(SEND_WINDOW_FILES.filter((file) => !saying.has(file))).toEqual([]);
});

test('a window of another sense, or a retired word, is found; the allowed senses are not', () => {
	const tracking = 'runner/src/tracking/tracking.ts';
	expect(misuses(tracking, '// Each process keeps a window over its requests.')).toHaveLength(1);
	expect(misuses(tracking, '// Checks go out within the customer-care window.')).toEqual([]);
	expect(misuses('runner/src/http/console/app.js', "window.addEventListener('hashchange', route);")).toEqual([]);
	expect(misuses('runner/src/sending/send.ts', "// Its zone's window closed: the rest stay pending.")).toEqual([]);
	expect(misuses('runner/src/sending/send.ts', 'const room = WINDOW_ROOM;')).toHaveLength(1);
	expect(misuses('runner/src/sending/feeder.ts', '// A send run of 50 recipients.')).toHaveLength(1);
	expect(misuses('runner/src/cli/campaign.ts', "'each run is a campaign of its own'")).toHaveLength(1);
	expect(misuses('runner/src/cli/budget.ts', '`; the next place frees at ${at}`')).toHaveLength(1);
	expect(misuses('runner/src/audience/budget.ts', 'await takeBudgetPlace(context, phone);')).toHaveLength(1);
	expect(misuses('runner/src/sending/spacing.ts', "// The next place on the number's clock.")).toEqual([]);
});
