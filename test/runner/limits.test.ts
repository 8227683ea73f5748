// @serial: measures upload timeouts in wall time
/**
 * What a caller may pile into Redis and how long an upload may stall, against a running
 * `convo-runner start` (real Redis, the sandbox) with small caps: each cap refuses the request past
 * it with a 4xx naming the cap and its setting, requests at the same instant never pass it between
 * them, and what is in Redis afterwards is counted. Also: every CSV the runner writes (the API's
 * and the CLI's report) neutralizes cells a spreadsheet would run, and keeps plain numbers (phones).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { parse } from 'csv-parse/sync';

import {
	positionalTemplate,
	rawUpload,
	runCli,
	scanKeys,
	startApi,
	useRunnerUnderTest,
	waitFor,
	apiCaller,
} from './support';

jest.setTimeout(180_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_MAX_RECIPIENTS: '50',
	RUNNER_MAX_DRAFTS: '3',
	RUNNER_MAX_CAMPAIGN_SCHEDULES: '2',
	RUNNER_MAX_REINDEX_SCHEDULES: '2',
	RUNNER_MAX_QUEUED_RUNS: '2',
	RUNNER_UPLOAD_IDLE_TIMEOUT: '2s',
});
let base = '';
let port = 0;

beforeAll(async () => {
	base = await startApi(runner);
	port = Number(new URL(base).port);
});

const call = apiCaller(() => base, TOKEN);

const settings = () => ({ template_id: positionalTemplate(runner.business).id, from: runner.business.phoneNumbers[0] });
const phoneOf = (seed: number, i: number) => `4917${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
const rows = (seed: number, n: number) =>
	Array.from({ length: n }, (_, i) => ({ phone: phoneOf(seed, i), 1: 'Ana', 2: 'x' }));
const prefix = () => runner.env.RUNNER_PREFIX as string;
/** Ids of the campaigns that have any key (meta, rows, ledger, phones, ticks) in Redis, read there. */
const campaignKeys = async () =>
	[
		...new Set(
			(await scanKeys(runner.context.redis, prefix())).flatMap((key) => /:campaign:([^:]+)/.exec(key)?.[1] ?? []),
		),
	].sort();

test('the report CSV, from the API and from the CLI, turns cells starting with = + - @ tab or CR into text, and keeps plain numbers like +4930100200', async () => {
	const hostile = [
		'=HYPERLINK("http://evil.example/","click")',
		'-2+3',
		'@SUM(A1:A9)',
		'\t=1+1',
		'\r=1+1',
		'+1+2',
		'=1',
	];
	const plain = ['+4930100200', '-5'];
	const recipients = [
		{ phone: '+4930100200', 1: 'Ana', 2: 'x' },
		...[...hostile, ...plain].map((phone) => ({ phone, 1: 'Ana', 2: 'x' })),
	];
	const created = await call('POST', '/api/campaigns', { ...settings(), recipients });
	expect(created.status).toBe(201);
	const id = created.json.id as string;
	// Line 1 is accepted; the rest are rejected (bad phones, or the same phone twice) and keep the phone as typed.
	expect(created.json.rejected).toBe(recipients.length - 1);

	const expected = new Map<number, string>([
		[1, '4930100200'],
		...hostile.map((phone, i) => [i + 2, `'${phone}`] as [number, string]),
		[hostile.length + 2, '+4930100200'],
		[hostile.length + 3, '-5'],
	]);
	const fromApi = await call('GET', `/api/campaigns/${id}/report?format=csv`);
	expect(fromApi.status).toBe(200);
	const cli = await runCli(['campaign', 'report', id, '--format', 'csv'], runner.env);
	expect(cli.code).toBe(0);
	for (const text of [fromApi.text, cli.stdout]) {
		const table = parse(text, { columns: true }) as Array<Record<string, string>>;
		expect(new Map(table.map((row) => [Number(row.line), row.phone]))).toEqual(expected);
		// No cell of any column may start a formula, except a plain signed number.
		for (const row of table)
			for (const cell of Object.values(row))
				expect(/^[=+\-@\t\r]/.test(cell) && !/^[+-]?\d+(\.\d+)?$/.test(cell)).toBe(false);
	}
});

test('rows per campaign (RUNNER_MAX_RECIPIENTS): inline rows, an upload and a draft chunk past it get 413 naming recipients and the setting; nothing is written', async () => {
	const before = await campaignKeys();
	const inline = await call('POST', '/api/campaigns', { ...settings(), recipients: rows(1, 51) });
	expect(inline.status).toBe(413);
	expect(inline.json).toMatchObject({
		status: 413,
		field: 'recipients',
		message: expect.stringContaining('RUNNER_MAX_RECIPIENTS'),
	});
	const csv = ['phone,1,2', ...rows(2, 51).map((row) => `${row.phone},Ana,x`)].join('\n') + '\n';
	const query = new URLSearchParams(settings()).toString();
	const upload = await call('POST', `/api/campaigns?${query}`, csv, { 'content-type': 'text/csv' });
	expect(upload.status).toBe(413);
	expect(upload.json).toMatchObject({
		field: 'recipients',
		message: expect.stringContaining('at most 50 recipients (RUNNER_MAX_RECIPIENTS)'),
	});
	expect(await campaignKeys()).toEqual(before);

	// Exactly the cap is accepted.
	expect((await call('POST', '/api/campaigns', { ...settings(), recipients: rows(3, 50) })).status).toBe(201);

	const draft = await call('POST', '/api/campaigns', { ...settings(), draft: true, recipients: rows(4, 40) });
	expect(draft.status).toBe(201);
	const chunk = await call('POST', `/api/campaigns/${draft.json.id}/recipients`, { recipients: rows(5, 11) });
	expect(chunk.status).toBe(413);
	expect(chunk.json).toMatchObject({ field: 'recipients', message: expect.stringContaining('RUNNER_MAX_RECIPIENTS') });
	expect(await runner.context.redis.hlen(runner.context.keys.recipients(settings().from, draft.json.id))).toBe(40);
	expect((await call('POST', `/api/campaigns/${draft.json.id}/recipients`, { recipients: rows(5, 10) })).status).toBe(
		200,
	);
	expect(await runner.context.redis.hlen(runner.context.keys.recipients(settings().from, draft.json.id))).toBe(50);
	expect((await call('POST', `/api/campaigns/${draft.json.id}/cancel`)).status).toBe(200);
});

test('open drafts (RUNNER_MAX_DRAFTS=3): of 8 created at once exactly 3 exist, the rest get 409 naming the setting; a started draft frees its place', async () => {
	const answers = await Promise.all(
		Array.from({ length: 8 }, () => call('POST', '/api/campaigns', { ...settings(), draft: true })),
	);
	const made = answers.filter((answer) => answer.status === 201);
	expect(made).toHaveLength(3);
	for (const refused of answers.filter((answer) => answer.status !== 201)) {
		expect(refused.json).toMatchObject({ status: 409, message: expect.stringContaining('RUNNER_MAX_DRAFTS') });
	}
	const { redis, keys } = runner.context;
	const states = await Promise.all(
		(await redis.zrange(keys.campaigns, 0, -1)).map((id) => redis.hget(keys.campaign(settings().from, id), 'state')),
	);
	expect(states.filter((state) => state === 'draft')).toHaveLength(3);

	// Started, a draft is no longer open: a new one may be created.
	expect((await call('POST', `/api/campaigns/${made[0].json.id}/recipients`, { recipients: rows(6, 1) })).status).toBe(
		200,
	);
	expect((await call('POST', `/api/campaigns/${made[0].json.id}/start`)).status).toBe(200);
	const another = await call('POST', '/api/campaigns', { ...settings(), draft: true });
	expect(another.status).toBe(201);
	expect((await call('POST', '/api/campaigns', { ...settings(), draft: true })).status).toBe(409);
	for (const id of [made[1].json.id, made[2].json.id, another.json.id])
		await call('POST', `/api/campaigns/${id}/cancel`);
});

test('campaign and reindex schedules (2 each): of 5 created at once exactly 2 exist, in Redis and as BullMQ schedulers; the rest get 409 naming cron and the setting', async () => {
	const campaignAnswers = await Promise.all(
		Array.from({ length: 5 }, () =>
			call('POST', '/api/campaigns', {
				...settings(),
				cron: '0 9 * * *',
				source_url: 'https://feeds.example.com/recipients.csv',
			}),
		),
	);
	const reindexAnswers = await Promise.all(
		Array.from({ length: 5 }, () =>
			call('POST', '/api/reindex', {
				collection_id: randomUUID(),
				source: 'https://feeds.example.com/feed.ndjson',
				id_field: 'sku',
				cron: '0 3 * * *',
			}),
		),
	);
	for (const [answers, setting] of [
		[campaignAnswers, 'RUNNER_MAX_CAMPAIGN_SCHEDULES'],
		[reindexAnswers, 'RUNNER_MAX_REINDEX_SCHEDULES'],
	] as const) {
		expect(answers.filter((answer) => answer.status === 201)).toHaveLength(2);
		for (const refused of answers.filter((answer) => answer.status !== 201))
			expect(refused.json).toMatchObject({ status: 409, field: 'cron', message: expect.stringContaining(setting) });
	}
	const { redis, keys, queues } = runner.context;
	expect(await redis.zcard(keys.schedules)).toBe(2);
	expect(await redis.zcard(keys.reindex.schedules)).toBe(2);
	const allKeys = await scanKeys(redis, prefix());
	expect(allKeys.filter((key) => key.startsWith(keys.schedule('')))).toHaveLength(2);
	expect(allKeys.filter((key) => key.startsWith(keys.reindex.schedule('')))).toHaveLength(2);
	expect(
		(await queues.control.getJobSchedulers()).filter((scheduler) => String(scheduler.key).startsWith('cron-')),
	).toHaveLength(2);
	expect(
		(await queues.reindex.getJobSchedulers()).filter((scheduler) => String(scheduler.key).startsWith('reindex-')),
	).toHaveLength(2);
});

test('queued reindex runs (RUNNER_MAX_QUEUED_RUNS=2): with both workers busy, 2 runs may wait and the next gets 429 naming the setting', async () => {
	// A feed that sends one row and then nothing: the runs reading it keep their worker busy.
	const hanging: Server = createServer((_request, response) => {
		response.writeHead(200, { 'content-type': 'application/x-ndjson' });
		response.write('{"sku":"a","name":"A"}\n');
	});
	await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
	const source = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/feed.ndjson`;
	const start = () => call('POST', '/api/reindex', { collection_id: randomUUID(), source, id_field: 'sku' });
	try {
		const busy = [await start(), await start()];
		expect(busy.map((answer) => answer.status)).toEqual([201, 201]);
		await waitFor(
			'both runs to be taken by the workers',
			async () =>
				(await runner.context.queues.reindex.getJobCountByTypes('wait')) === 0 &&
				(await runner.context.queues.reindex.getJobCountByTypes('active')) === 2,
			30_000,
		);
		expect([(await start()).status, (await start()).status]).toEqual([201, 201]);
		const refused = await start();
		expect(refused.status).toBe(429);
		expect(refused.json.message).toContain('RUNNER_MAX_QUEUED_RUNS');
		expect(await runner.context.redis.zcard(runner.context.keys.reindex.runs)).toBe(4);
	} finally {
		hanging.closeAllConnections();
		await new Promise((resolve) => hanging.close(resolve));
	}
});

/** A raw campaign upload (support.ts's slowUpload) with the settings in its query. */
const slowUpload = (first: string, rest: string[], everyMs: number, total: number) =>
	rawUpload(
		port,
		{ path: `/api/campaigns?${new URLSearchParams(settings()).toString()}`, token: TOKEN, total },
		first,
		rest,
		everyMs,
	);

test('an upload that sends nothing for RUNNER_UPLOAD_IDLE_TIMEOUT (2 s) is ended with 408 and creates nothing; a slow one that keeps sending is not', async () => {
	const { redis, keys } = runner.context;
	const campaignsBefore = await redis.zcard(keys.campaigns);
	const keysBefore = await campaignKeys();
	const head = 'phone,1,2\n' + `${phoneOf(7, 1)},Ana,x\n`;
	// Promises 1000 bytes, sends the first row, then stalls.
	const stalled = await slowUpload(head, [], 0, 1000);
	expect(stalled.status).toBe(408);
	expect(stalled.text).toContain('RUNNER_UPLOAD_IDLE_TIMEOUT');
	expect(stalled.afterMs).toBeGreaterThanOrEqual(1900);
	expect(stalled.afterMs).toBeLessThan(10_000);
	expect(await stalled.closed).toBe(true);
	expect(await redis.zcard(keys.campaigns)).toBe(campaignsBefore);
	expect(await campaignKeys()).toEqual(keysBefore);

	// Refused at its first bytes (a NUL: binary), then silent: the rest is not waited for forever either.
	const refused = await slowUpload('\u0000phone\n', [], 0, 1000);
	expect(refused.status).toBe(408);
	expect(refused.afterMs).toBeLessThan(10_000);
	expect(await refused.closed).toBe(true);
	expect(await redis.zcard(keys.campaigns)).toBe(campaignsBefore);

	// A row every second for 5 s: longer than the timeout in all, never idle that long.
	const pieces = Array.from({ length: 5 }, (_, i) => `${phoneOf(8, i)},Ana,x\n`);
	const total = Buffer.byteLength(head) + pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
	const slow = await slowUpload(head, pieces, 1000, total);
	await slow.closed;
	expect(slow.status).toBe(201);
	expect(slow.afterMs).toBeGreaterThanOrEqual(5000);
	expect(await redis.zcard(keys.campaigns)).toBe(campaignsBefore + 1);
});
