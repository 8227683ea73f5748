/**
 * Draft campaigns over the control API of a running `convo-runner start` (real Redis, the
 * sandbox): 2,500 rows in three chunks become one campaign with its lines and rejections right,
 * a phone refused across chunks, a replayed chunk adding nothing, nothing sent until start, a
 * start sent twice starting it once; then the sends are counted in the sandbox's own log.
 */
import { dropExpiredDrafts } from '../../runner/src/campaigns/draft';
import {
	expectReportMatchesLog,
	positionalTemplate,
	report,
	sendsByPhone,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	apiCaller,
} from './support';

jest.setTimeout(240_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

const call = apiCaller(() => base, TOKEN);

const settings = () => ({ template_id: positionalTemplate(runner.business).id, from: runner.business.phoneNumbers[0] });
const phoneOf = (seed: number, i: number) => `4916${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
const sendsTo = async (phones: string[]) => {
	const wanted = new Set(phones);
	return (await templateSends(runner.sandbox)).filter((message) => wanted.has(message.to));
};

test('2,500 rows in three chunks: one campaign, lines across chunks, duplicates refused across chunks, a replayed chunk adds nothing, nothing sent before start, start twice starts once', async () => {
	// Line n (1-based) holds phone n-1, except: line 500 a bad phone, line 1500 the phone of line 11,
	// line 1600 broken buttons, line 2100 the phone of line 1201.
	const rowOf = (line: number): Record<string, unknown> => {
		if (line === 500) return { phone: 'not a phone', 1: 'x', 2: 'y' };
		if (line === 1500) return { phone: `+${phoneOf(1, 10)}`, 1: 'again', 2: 'y' };
		if (line === 1600) return { phone: phoneOf(1, 1599), 1: 'x', 2: 'y', buttons: '[oops' };
		if (line === 2100) return { phone: phoneOf(1, 1200), 1: 'again', 2: 'y' };
		return { phone: phoneOf(1, line - 1), 1: `Customer ${line}`, 2: `order ${line}` };
	};
	const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => rowOf(from + i));
	const expectedRejected = [500, 1500, 1600, 2100];
	const accepted = Array.from({ length: 2500 }, (_, i) => i + 1)
		.filter((line) => !expectedRejected.includes(line))
		.map((line) => phoneOf(1, line - 1));

	const created = await call(
		'POST',
		'/api/campaigns',
		{ ...settings(), rate: 300, draft: true },
		{ 'idempotency-key': 'exec-1/node-a/create' },
	);
	expect(created.status).toBe(201);
	expect(created.json).toMatchObject({ state: 'draft', total: 0, accepted: 0, rejected: 0, rejections: [] });
	const id = created.json.id as string;

	const chunk = (rows: unknown[], key: string) =>
		call('POST', `/api/campaigns/${id}/recipients`, { recipients: rows }, { 'idempotency-key': key });
	const first = await chunk(lines(1, 1000), 'exec-1/node-a/chunk-0');
	expect(first.status).toBe(200);
	expect(first.json).toMatchObject({
		id,
		state: 'draft',
		added: { total: 1000, accepted: 999, rejected: 1 },
		total: 1000,
		accepted: 999,
		rejected: 1,
	});
	expect(first.json.added.rejections).toEqual([
		{ line: 500, phone: 'not a phone', reason: expect.stringMatching(/^phone /) },
	]);

	const second = await chunk(lines(1001, 2000), 'exec-1/node-a/chunk-1');
	expect(second.json).toMatchObject({
		added: { total: 1000, accepted: 998, rejected: 2 },
		total: 2000,
		accepted: 1997,
		rejected: 3,
	});
	expect(second.json.added.rejections).toEqual([
		{ line: 1500, phone: `+${phoneOf(1, 10)}`, reason: `phone is already in this campaign (line 11)` },
		{ line: 1600, phone: phoneOf(1, 1599), reason: expect.stringContaining('buttons is not JSON') },
	]);

	// The same chunk again (a retried execution): the first answer, nothing added.
	const replayed = await chunk(lines(1001, 2000), 'exec-1/node-a/chunk-1');
	expect(replayed.status).toBe(200);
	expect(replayed.json).toEqual({ ...second.json, replayed: true });

	const third = await chunk(lines(2001, 2500), 'exec-1/node-a/chunk-2');
	expect(third.json).toMatchObject({
		added: { total: 500, accepted: 499, rejected: 1 },
		total: 2500,
		accepted: 2496,
		rejected: 4,
	});
	expect(third.json.added.rejections).toEqual([
		{ line: 2100, phone: phoneOf(1, 1200), reason: `phone is already in this campaign (line 1201)` },
	]);

	// The create replayed answers the same draft.
	expect(
		(
			await call(
				'POST',
				'/api/campaigns',
				{ ...settings(), rate: 300, draft: true },
				{ 'idempotency-key': 'exec-1/node-a/create' },
			)
		).json,
	).toMatchObject({ id, replayed: true });

	// A draft: its status, its report (paged, filtered), and no message sent.
	const status = await call('GET', `/api/campaigns/${id}`);
	expect(status.json).toMatchObject({
		id,
		state: 'draft',
		total: 2500,
		counts: { pending: 2496, rejected: 4, sent: 0 },
	});
	expect((await call('GET', '/api/campaigns?limit=50')).json.items).toContainEqual(
		expect.objectContaining({ id, state: 'draft' }),
	);
	const rejectedRows = await call('GET', `/api/campaigns/${id}/report?outcome=rejected`);
	expect(rejectedRows.json.map((row: { line: number }) => row.line)).toEqual(expectedRejected);
	const lastPage = await call('GET', `/api/campaigns/${id}/report?format=json&limit=1000&offset=2000`);
	expect(lastPage.json.map((row: { line: number }) => row.line)).toEqual(
		Array.from({ length: 500 }, (_, i) => 2001 + i),
	);
	const pendingPage = await call('GET', `/api/campaigns/${id}/report?outcome=pending,rejected&limit=3&offset=498`);
	expect(pendingPage.json.map((row: { line: number; outcome: string }) => `${row.line}:${row.outcome}`)).toEqual([
		'499:pending',
		'500:rejected',
		'501:pending',
	]);
	await new Promise((resolve) => setTimeout(resolve, 2500));
	expect(await sendsTo(accepted)).toEqual([]);

	// Start twice at once: one campaign runs; every accepted phone gets exactly one message.
	const [startA, startB] = await Promise.all([
		call('POST', `/api/campaigns/${id}/start`),
		call('POST', `/api/campaigns/${id}/start`, {}),
	]);
	expect([startA.status, startB.status]).toEqual([200, 200]);
	expect(['running', 'completed']).toContain(startA.json.state);
	expect(startA.json).toMatchObject({ id, total: 2500, template_id: settings().template_id });
	expect((await chunk(lines(2501, 2502), 'exec-1/node-a/chunk-3')).status).toBe(409);
	await waitFor(
		'the campaign to complete',
		async () => (await call('GET', `/api/campaigns/${id}`)).json.state === 'completed',
		180_000,
		500,
	);
	expect((await call('POST', `/api/campaigns/${id}/start`)).json).toMatchObject({
		id,
		state: 'completed',
		counts: { sent: 2496, rejected: 4, pending: 0 },
	});

	const sends = await sendsTo([...accepted, phoneOf(1, 499)]);
	expect(sends).toHaveLength(2496);
	expect(sendsByPhone(sends).size).toBe(2496);
	const rows = await report(runner.context, id);
	expect(rows.map((row) => row.line)).toEqual(Array.from({ length: 2500 }, (_, i) => i + 1));
	expectReportMatchesLog(rows, sends);
	// The phone index outlives the draft (a reply finds its recipient there), one entry per accepted phone, for good.
	const phones = runner.context.keys.phones(settings().from, id);
	expect(await runner.context.redis.hlen(phones)).toBe(2496);
	expect(await runner.context.redis.pttl(phones)).toBe(-1);
});

test('first_line places a chunk; a draft with no accepted row completes on start; a draft with a start time becomes scheduled; a draft can be cancelled', async () => {
	const created = await call('POST', '/api/campaigns', {
		...settings(),
		draft: true,
		recipients: [{ phone: phoneOf(2, 0), 1: 'a', 2: 'b' }],
	});
	const id = created.json.id as string;
	expect(created.json).toMatchObject({ state: 'draft', total: 1, accepted: 1 });
	const placed = await call('POST', `/api/campaigns/${id}/recipients`, {
		recipients: [
			{ phone: phoneOf(2, 1), 1: 'a', 2: 'b' },
			{ phone: phoneOf(2, 0), 1: 'a', 2: 'b' },
		],
		first_line: 101,
	});
	expect(placed.json.added.rejections).toEqual([
		{ line: 102, phone: phoneOf(2, 0), reason: `phone is already in this campaign (line 1)` },
	]);
	const next = await call('POST', `/api/campaigns/${id}/recipients`, { recipients: [{ phone: 'x' }] });
	expect(next.json.added.rejections).toEqual([expect.objectContaining({ line: 103 })]);
	const tooMany = await call('POST', `/api/campaigns/${id}/recipients`, {
		recipients: Array.from({ length: 1001 }, (_, i) => ({ phone: phoneOf(2, 10 + i) })),
	});
	expect(tooMany).toMatchObject({ status: 400, json: { field: 'recipients' } });
	expect((await call('POST', `/api/campaigns/${id}/cancel`)).json).toMatchObject({
		id,
		state: 'cancelled',
		cancelled: 2,
	});
	expect(
		(await call('POST', `/api/campaigns/${id}/recipients`, { recipients: [{ phone: phoneOf(2, 5) }] })).status,
	).toBe(409);
	expect((await call('POST', `/api/campaigns/${id}/start`)).json).toMatchObject({
		id,
		state: 'cancelled',
		counts: { cancelled: 2, rejected: 2 },
	});

	const onlyBad = await call('POST', '/api/campaigns', { ...settings(), draft: true, recipients: [{ phone: 'nope' }] });
	expect((await call('POST', `/api/campaigns/${onlyBad.json.id}/start`)).json).toMatchObject({
		state: 'completed',
		counts: { rejected: 1, pending: 0 },
	});

	const later = await call('POST', '/api/campaigns', {
		...settings(),
		draft: true,
		at: new Date(Date.now() + 3_600_000).toISOString(),
	});
	await call('POST', `/api/campaigns/${later.json.id}/recipients`, {
		recipients: [{ phone: phoneOf(2, 50), 1: 'a', 2: 'b' }],
	});
	expect((await call('POST', `/api/campaigns/${later.json.id}/start`)).json).toMatchObject({ state: 'scheduled' });
	await call('POST', `/api/campaigns/${later.json.id}/cancel`);

	expect((await call('POST', '/api/campaigns/cnosuch/recipients', { recipients: [] })).status).toBe(404);
	expect((await call('POST', '/api/campaigns/cnosuch/start')).status).toBe(404);
	expect(
		(await call('POST', '/api/campaigns', { ...settings(), draft: true, cron: '0 9 * * *' })).json.message,
	).toMatch(/^cron does not go with a draft/);
	await new Promise((resolve) => setTimeout(resolve, 1500));
	expect(await sendsTo([phoneOf(2, 0), phoneOf(2, 1), phoneOf(2, 50)])).toEqual([]);
});

test('a draft never started is removed when its 24 h are up', async () => {
	const created = await call('POST', '/api/campaigns', {
		...settings(),
		draft: true,
		recipients: [{ phone: phoneOf(3, 0), 1: 'a', 2: 'b' }],
	});
	const id = created.json.id as string;
	const { redis, keys } = runner.context;
	expect(Number(await redis.zscore(keys.drafts, id))).toBeGreaterThan(Date.now() + 23 * 3600_000);
	const { from } = settings();
	const ttl = await redis.pttl(keys.ledger(from, id));
	expect(ttl).toBeGreaterThan(23 * 3600_000);
	// Its time comes: Redis expires the keys, the feeder tick drops it from the list.
	for (const key of [keys.campaign(from, id), keys.recipients(from, id), keys.ledger(from, id), keys.phones(from, id)])
		await redis.pexpire(key, 1);
	await redis.zadd(keys.drafts, Date.now() - 1, id);
	await new Promise((resolve) => setTimeout(resolve, 50));
	await dropExpiredDrafts(runner.context);
	expect((await call('GET', `/api/campaigns/${id}`)).status).toBe(404);
	expect(
		(await call('GET', '/api/campaigns?limit=500')).json.items.map((item: { id: string }) => item.id),
	).not.toContain(id);
	expect(await redis.zscore(keys.campaigns, id)).toBeNull();
});
