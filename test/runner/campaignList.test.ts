/**
 * The campaign list past its first hundred, against a real `convo-runner start` (its own Redis, the
 * sandbox): GET /api/campaigns pages through 108 campaigns, searches by name and id, filters by state
 * and by number, sorts by state, and refuses a bad parameter with a 400 naming it and its rule;
 * `campaign list` shows the console's counts (a failed campaign's recipients as not sent) and takes
 * the same filters and paging.
 */
import { randomUUID } from 'node:crypto';

import { campaignListAnswer } from 'convo-contract';

import { cancel, createCampaign } from '../../runner/src/core/campaigns';
import {
	apiCaller,
	positionalTemplate,
	runCli,
	startApi,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(180_000);

const TOKEN = 'campaign-list-token-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';
const call = apiCaller(() => base, TOKEN);

const BULK = 105;
const created: { bulk: string[]; needle: string; cancelled: string; failed: string } = {
	bulk: [],
	needle: '',
	cancelled: '',
	failed: '',
};

beforeAll(async () => {
	base = await startApi(runner);
	const { path } = writeRecipientsCsv(1, { seed: 31 });
	// Scheduled an hour ahead: stored and listed through the real create, nothing sent.
	const at = new Date(Date.now() + 3_600_000).toISOString();
	const settings = { templateId: positionalTemplate(runner.business).id, source: path, at };
	const make = async (name: string, from = runner.business.phoneNumbers[0]) => {
		const answer = await createCampaign(runner.context, { ...settings, name, from });
		if (answer.kind !== 'campaign') throw new Error('not a campaign');
		return answer.id;
	};
	for (let i = 0; i < BULK; i += 1) created.bulk.push(await make(`Bulk ${String(i).padStart(3, '0')}`));
	created.needle = await make('Needle Promo', runner.business.phoneNumbers[1]);
	created.cancelled = await make('Called off');
	await cancel(runner.context, created.cancelled);
	// A template the service does not have: the campaign ends failed, its 2 recipients not sent.
	const { path: two } = writeRecipientsCsv(2, { seed: 32 });
	const failed = await createCampaign(runner.context, {
		templateId: randomUUID(),
		from: runner.business.phoneNumbers[0],
		source: two,
		name: 'Doomed',
	});
	if (failed.kind !== 'campaign') throw new Error('not a campaign');
	created.failed = failed.id;
	await waitFor(
		'the campaign with an unknown template to fail',
		async () => (await call('GET', `/api/campaigns/${created.failed}`)).json?.state === 'failed',
		60_000,
	);
});

const page = async (query: string) => {
	const answer = await call('GET', `/api/campaigns?${query}`);
	expect(answer.status).toBe(200);
	return campaignListAnswer.parse(answer.json);
};

test('API: pages of 50 reach every one of 108 campaigns, newest first, none twice', async () => {
	const ids: string[] = [];
	let total = 0;
	for (let offset = 0; ; offset += 50) {
		const answer = await page(`limit=50&offset=${offset}`);
		total = answer.total;
		expect(answer).toMatchObject({ limit: 50, offset });
		ids.push(...answer.items.map((item) => item.id));
		if (answer.items.length < 50) break;
	}
	expect(total).toBe(BULK + 3);
	expect(ids).toHaveLength(total);
	expect(new Set(ids).size).toBe(total);
	expect(ids[0]).toBe(created.failed);
	// The first bulk campaign, made first, is last: past the first 100.
	expect(ids.indexOf(created.bulk[0])).toBe(total - 1);
	expect((await page('limit=500')).items).toHaveLength(total);
});

test('API: search by name or id (any case), filter by state and by number, sort by state', async () => {
	const byName = await page('search=needle%20pro');
	expect(byName.items.map((item) => item.id)).toEqual([created.needle]);
	expect(byName.total).toBe(1);
	const byId = await page(`search=${created.bulk[3].toUpperCase()}`);
	expect(byId.items.map((item) => item.id)).toEqual([created.bulk[3]]);
	// A search pages too: its 105 matches, the last page past the first hundred.
	const first = await page('search=BULK&limit=100');
	const second = await page('search=BULK&limit=100&offset=100');
	expect(first.total).toBe(BULK);
	expect(first.items).toHaveLength(100);
	expect(second.items).toHaveLength(5);
	expect(second.items.at(-1)?.name).toBe('Bulk 000');

	expect((await page('state=cancelled')).items.map((item) => item.id)).toEqual([created.cancelled]);
	const ended = await page('state=failed,cancelled');
	expect(ended.items.map((item) => item.id)).toEqual([created.failed, created.cancelled]);
	const scheduled = await page('state=scheduled&limit=500');
	expect(scheduled.total).toBe(BULK + 1);
	expect(scheduled.items.every((item) => item.state === 'scheduled')).toBe(true);

	// The number with or without its +: its digits are compared.
	const second_number = runner.business.phoneNumbers[1];
	for (const from of [second_number, `+${second_number.replace(/^\+/, '')}`])
		expect((await page(`from=${encodeURIComponent(from)}`)).items.map((item) => item.id)).toEqual([created.needle]);
	expect((await page(`from=${encodeURIComponent(runner.business.phoneNumbers[0])}&limit=1`)).total).toBe(BULK + 2);
	expect((await page('search=needle&state=cancelled')).total).toBe(0);

	// Life-cycle order (scheduled before cancelled before failed), newest first within a state.
	const states = (await page('sort=state&limit=500')).items;
	expect(states.map((item) => item.state)).toEqual([
		...Array<string>(BULK + 1).fill('scheduled'),
		'cancelled',
		'failed',
	]);
	expect(states[0].id).toBe(created.needle);
});

test('API: a bad parameter is a 400 naming it and its rule', async () => {
	for (const [query, field, rule] of [
		['limit=0', 'limit', /limit must be at least 1/],
		['limit=501', 'limit', /limit must be at most 500/],
		['limit=ten', 'limit', /limit must be a whole number/],
		['offset=-1', 'offset', /offset must be 0 or more/],
		['state=done', 'state', /state must be one or more of draft, scheduled, running/],
		['state=running,lost', 'state', /state must be one or more of/],
		['sort=name', 'sort', /sort must be one of created, state/],
		[`search=${'x'.repeat(201)}`, 'search', /search must be at most 200 characters/],
	] as const) {
		const answer = await call('GET', `/api/campaigns?${query}`);
		expect(answer.status).toBe(400);
		expect(answer.json).toMatchObject({ status: 400, field });
		expect((answer.json as { message: string }).message).toMatch(rule);
	}
});

test('CLI: campaign list shows NOT SENT for a failed campaign, and takes --search, --state, --from, --sort, --limit, --offset', async () => {
	const all = await runCli(['campaign', 'list', '--state', 'failed'], runner.env);
	expect(all.code).toBe(0);
	const lines = all.stdout.trim().split('\n');
	const header = lines[0].split(/\s{2,}/);
	expect(header).toEqual([
		'ID',
		'NAME',
		'STATE',
		'CREATED (UTC)',
		'START (UTC)',
		'TEMPLATE',
		'FROM',
		'TOTAL',
		'SENT',
		'NOT SENT',
		'UNKNOWN',
		'CANCELLED',
		'REJECTED',
		'PENDING',
	]);
	const row = lines.find((line) => line.startsWith(created.failed))?.split(/\s{2,}/) ?? [];
	expect(row[2]).toBe('failed');
	expect(Object.fromEntries(header.slice(7).map((title, i) => [title, row[7 + i]]))).toEqual({
		TOTAL: '2',
		SENT: '0',
		'NOT SENT': '2',
		UNKNOWN: '0',
		CANCELLED: '0',
		REJECTED: '0',
		PENDING: '0',
	});
	expect(lines).toHaveLength(2);

	const everyOne = JSON.parse((await runCli(['campaign', 'list', '--json'], runner.env)).stdout);
	expect(everyOne.campaigns).toHaveLength(BULK + 3);
	expect(everyOne.total).toBe(BULK + 3);

	const paged = await runCli(['campaign', 'list', '--limit', '50', '--offset', '100'], runner.env);
	expect(paged.code).toBe(0);
	expect(paged.stdout.trim().split('\n').at(-1)).toBe(`campaigns 101-${BULK + 3} of ${BULK + 3}`);
	const firstPage = await runCli(['campaign', 'list', '--limit', '50'], runner.env);
	expect(firstPage.stdout.trim().split('\n').at(-1)).toBe(`campaigns 1-50 of ${BULK + 3} (next page: --offset 50)`);

	const searched = JSON.parse(
		(
			await runCli(
				['campaign', 'list', '--search', 'NEEDLE', '--from', runner.business.phoneNumbers[1], '--json'],
				runner.env,
			)
		).stdout,
	);
	expect(searched.campaigns.map((c: { id: string }) => c.id)).toEqual([created.needle]);
	expect(searched.schedules).toEqual([]);
	const byState = JSON.parse(
		(
			await runCli(
				['campaign', 'list', '--sort', 'state', '--limit', '2', '--offset', `${BULK + 1}`, '--json'],
				runner.env,
			)
		).stdout,
	);
	expect(byState.campaigns.map((c: { state: string }) => c.state)).toEqual(['cancelled', 'failed']);
	const none = await runCli(['campaign', 'list', '--search', 'no such campaign'], runner.env);
	expect(none.stdout.trim()).toBe('no campaign matches');

	for (const [args, rule] of [
		[['--state', 'done'], /^--state must be one or more of draft, scheduled/],
		[['--limit', '0'], /^--limit must be at least 1/],
		[['--offset', 'x'], /^--offset must be a whole number/],
	] as const) {
		const refused = await runCli(['campaign', 'list', ...args, '--json'], runner.env);
		expect(refused.code).toBe(1);
		expect(JSON.parse(refused.stdout).error).toMatch(rule);
	}
});
