/**
 * Campaign names (#21 item 9) as the API and the CLI show them, against a real `convo-runner
 * start` (its own Redis, the sandbox): a name given is kept (trimmed) and shown by GET, the list
 * and status; none given, the campaign is named after its file or URL, "Upload" and the time for
 * rows sent in the request, and a cron schedule's runs carry the schedule's name. A bad name is
 * refused naming the field as each client calls it (`name`, `--name`), and creates nothing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { campaignAnswer, campaignListAnswer } from 'convo-contract';

import { positionalTemplate, runCli, startApi, useRunnerUnderTest, waitFor, apiCaller } from './support';

jest.setTimeout(120_000);

const TOKEN = 'names-test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

const recipientsCsv = (seed: number, n = 2) =>
	`phone,1,2\n${Array.from({ length: n }, (_, i) => `+4917${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')},Ada,A-${i}`).join('\n')}\n`;
/** A CSV served by a server of the test's own (loopback URLs are allowed to the runner under test). */
const served = createServer((request, response) => {
	response
		.writeHead(200, { 'content-type': 'text/csv' })
		.end(recipientsCsv(request.url?.includes('nightly') ? 81 : 80));
});

beforeAll(async () => {
	base = await startApi(runner);
	await new Promise<void>((resolve) => served.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
	await new Promise((resolve) => served.close(resolve).closeAllConnections());
});

const servedUrl = (path: string) => `http://127.0.0.1:${(served.address() as AddressInfo).port}${path}`;
const template = () => positionalTemplate(runner.business).id;
const settings = () => ({ template_id: template(), from: runner.business.phoneNumbers[0] });
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const UPLOAD_NAME = /^Upload \d{4}-\d\d-\d\d \d\d:\d\d UTC$/;

const call = apiCaller(() => base, TOKEN);

function writeCsv(name: string, seed: number): string {
	const path = join(mkdtempSync(join(tmpdir(), 'convo-names-')), name);
	writeFileSync(path, recipientsCsv(seed));
	return path;
}

test('API: a name given is kept trimmed; none given, the file name of source_url, "Upload <time>" for rows in the request; GET and the list show it with created_at, template_id, from, totals and state', async () => {
	const named = await call('POST', '/api/campaigns', {
		...settings(),
		name: '  March promo  ',
		at: inAnHour(),
		recipients: [{ phone: '+4917000000001', 1: 'Ada', 2: 'A-1' }],
	});
	expect(named.status).toBe(201);
	expect(named.json).toMatchObject({ name: 'March promo', state: 'scheduled' });

	const fromUrl = await call('POST', '/api/campaigns', {
		...settings(),
		at: inAnHour(),
		source_url: servedUrl('/lists/customers-march.csv'),
	});
	expect(fromUrl.status).toBe(201);
	expect(fromUrl.json.name).toBe('customers-march');

	const upload = await call(
		'POST',
		`/api/campaigns?template_id=${template()}&from=${settings().from}&at=${encodeURIComponent(inAnHour())}`,
		recipientsCsv(82),
		{ 'content-type': 'text/csv' },
	);
	expect(upload.status).toBe(201);
	expect(upload.json.name).toMatch(UPLOAD_NAME);
	const namedUpload = await call(
		'POST',
		`/api/campaigns?template_id=${template()}&from=${settings().from}&at=${encodeURIComponent(inAnHour())}&name=${encodeURIComponent('Spring list')}`,
		recipientsCsv(83),
		{ 'content-type': 'text/csv' },
	);
	expect(namedUpload.json.name).toBe('Spring list');

	const draft = await call('POST', '/api/campaigns', { ...settings(), draft: true, recipients: [] });
	expect(draft.json.name).toMatch(UPLOAD_NAME);
	const namedDraft = await call('POST', '/api/campaigns', { ...settings(), name: 'Draft of April', draft: true });
	expect(namedDraft.json.name).toBe('Draft of April');

	const shown = await call('GET', `/api/campaigns/${named.json.id}`);
	expect(campaignAnswer.parse(shown.json)).toMatchObject({
		id: named.json.id,
		name: 'March promo',
		state: 'scheduled',
		total: 1,
	});

	const list = await call('GET', '/api/campaigns?limit=10');
	const items = campaignListAnswer.parse(list.json).items;
	const byId = new Map(items.map((item) => [item.id, item]));
	const before = Date.now();
	for (const [created, name] of [
		[named, 'March promo'],
		[fromUrl, 'customers-march'],
		[namedUpload, 'Spring list'],
		[namedDraft, 'Draft of April'],
	] as const) {
		const item = byId.get(created.json.id);
		expect(item).toMatchObject({ name, template_id: template(), from: settings().from, state: created.json.state });
		expect(Date.parse(String(item?.created_at))).toBeGreaterThan(before - 120_000);
	}
	expect(byId.get(upload.json.id)?.name).toMatch(UPLOAD_NAME);
	expect(byId.get(fromUrl.json.id)).toMatchObject({ total: 2, counts: { pending: 2, sent: 0 } });
	// Newest first.
	expect(items[0].id).toBe(namedDraft.json.id);
});

test('API: a name too long, on two lines or empty is refused with 400 naming `name`, and nothing is created', async () => {
	const total = async () => (await call('GET', '/api/campaigns?limit=1')).json.total as number;
	const before = await total();
	const row = [{ phone: '+4917000000002', 1: 'Ada', 2: 'A-1' }];
	const tooLong = await call('POST', '/api/campaigns', { ...settings(), name: 'x'.repeat(121), recipients: row });
	expect(tooLong.status).toBe(400);
	expect(tooLong.json).toMatchObject({ field: 'name', message: 'name must be 1 to 120 characters' });
	const twoLines = await call('POST', '/api/campaigns', { ...settings(), name: 'March\npromo', recipients: row });
	expect(twoLines.status).toBe(400);
	expect(twoLines.json).toMatchObject({
		field: 'name',
		message: 'name must be one line of text, without control characters (tabs, line breaks)',
	});
	const blank = await call('POST', '/api/campaigns', { ...settings(), name: '   ', recipients: row });
	expect(blank.json).toMatchObject({ field: 'name', message: 'name must be 1 to 120 characters (it is empty)' });
	const upload = await call(
		'POST',
		`/api/campaigns?template_id=${template()}&from=${settings().from}&name=${'y'.repeat(130)}`,
		recipientsCsv(84),
		{ 'content-type': 'text/csv' },
	);
	expect(upload.status).toBe(400);
	expect(upload.json.field).toBe('name');
	// 120 characters exactly is a name.
	const longest = await call('POST', '/api/campaigns', { ...settings(), name: 'z'.repeat(120), draft: true });
	expect(longest.status).toBe(201);
	expect(await total()).toBe(before + 1);
});

test("API: each run of a cron schedule carries the schedule's name", async () => {
	const schedule = await call('POST', '/api/campaigns', {
		...settings(),
		name: 'Nightly list',
		source_url: servedUrl('/nightly.csv'),
		cron: '*/2 * * * * *',
		rate: 50,
	});
	expect(schedule.status).toBe(201);
	expect(schedule.json.schedule).toMatchObject({ name: 'Nightly list' });
	const scheduleId = String(schedule.json.schedule.id);
	try {
		const run = await waitFor(
			'a run of the schedule',
			async () => {
				const items = (await call('GET', '/api/campaigns?limit=50')).json.items as Array<{
					id: string;
					schedule_id?: string;
					name: string;
				}>;
				return items.find((item) => item.id.startsWith(scheduleId));
			},
			30_000,
		);
		expect(run.name).toBe('Nightly list');
	} finally {
		await call('POST', `/api/campaigns/${scheduleId}/cancel`);
	}
});

test("API: a schedule stored before names is listed with its source's name, as its runs are", async () => {
	const schedule = await call('POST', '/api/campaigns', {
		...settings(),
		source_url: servedUrl('/yearly.csv'),
		cron: '0 0 1 1 *',
	});
	expect(schedule.status).toBe(201);
	const id = String(schedule.json.schedule.id);
	try {
		const { redis, keys } = runner.context;
		const stored = JSON.parse((await redis.get(keys.schedule(id))) ?? '{}') as Record<string, unknown>;
		delete stored.name;
		await redis.set(keys.schedule(id), JSON.stringify(stored));
		const listed = (await call('GET', '/api/campaigns/schedules')).json.schedules as Array<{
			id: string;
			name: string;
		}>;
		expect(listed.find((each) => each.id === id)?.name).toBe(String(schedule.json.schedule.name));
	} finally {
		await call('DELETE', `/api/campaigns/schedules/${id}`);
	}
});

test('CLI: create --name, and without it the file name; list shows NAME, CREATED, START, TEMPLATE and FROM columns (--json whole); status shows the name and the start; a bad --name exits 1 naming --name', async () => {
	const from = `+${runner.business.phoneNumbers[0]}`;
	// A start time with an offset, as an operator writes it: shown back in UTC.
	const startsAt = new Date(Math.ceil((Date.now() + 3_600_000) / 60_000) * 60_000);
	const at = new Date(startsAt.getTime() + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
	const shownStart = startsAt.toISOString().slice(0, 16).replace('T', ' ');
	const created = await runCli(
		[
			'campaign',
			'create',
			'--name',
			'Spring sale',
			'--template',
			template(),
			'--from',
			from,
			'--recipients',
			writeCsv('spring.csv', 85),
			'--at',
			at,
			'--json',
		],
		runner.env,
	);
	expect(created.code).toBe(0);
	const named = JSON.parse(created.stdout);
	expect(named).toMatchObject({ kind: 'campaign', name: 'Spring sale' });
	const unnamed = JSON.parse(
		(
			await runCli(
				[
					'campaign',
					'create',
					'--template',
					template(),
					'--from',
					from,
					'--recipients',
					writeCsv('customers-march.csv', 86),
					'--at',
					inAnHour(),
					'--json',
				],
				runner.env,
			)
		).stdout,
	);
	expect(unnamed.name).toBe('customers-march');

	const list = await runCli(['campaign', 'list'], runner.env);
	expect(list.code).toBe(0);
	const lines = list.stdout.trim().split('\n');
	const header = lines.find((line) => line.startsWith('ID'));
	expect(header?.split(/\s{2,}/)).toEqual([
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
	const row = lines.find((line) => line.startsWith(named.id))?.split(/\s{2,}/);
	expect(row?.slice(0, 3)).toEqual([named.id, 'Spring sale', 'scheduled']);
	expect(row?.[3]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d$/);
	expect(row?.[4]).toBe(shownStart);
	expect(row?.slice(5)).toEqual([template(), from.slice(1), '2', '0', '0', '0', '0', '0', '2']);
	expect(lines.find((line) => line.startsWith(unnamed.id))).toContain('customers-march');

	const json = JSON.parse((await runCli(['campaign', 'list', '--json'], runner.env)).stdout);
	expect(json.campaigns.find((c: { id: string }) => c.id === named.id)).toMatchObject({
		name: 'Spring sale',
		template_id: template(),
		from: from.slice(1),
		total: 2,
		state: 'scheduled',
		created_at: expect.stringMatching(/Z$/),
		start_at: startsAt.toISOString(),
	});

	const status = await runCli(['campaign', 'status', named.id], runner.env);
	expect(status.stdout).toContain(`${named.id} "Spring sale": scheduled (starts ${shownStart} UTC) |`);
	expect(JSON.parse((await runCli(['campaign', 'status', named.id, '--json'], runner.env)).stdout)).toMatchObject({
		name: 'Spring sale',
		start_at: startsAt.toISOString(),
	});

	const bad = await runCli(
		[
			'campaign',
			'create',
			'--name',
			'n'.repeat(121),
			'--template',
			template(),
			'--from',
			from,
			'--recipients',
			writeCsv('bad.csv', 87),
			'--json',
		],
		runner.env,
	);
	expect(bad.code).toBe(1);
	expect(JSON.parse(bad.stdout).error).toBe('--name must be 1 to 120 characters');
});
