/**
 * Opt-outs (#23, the first "Done when"): one `convo-runner start` (API and workers) and a second
 * worker process on a real Redis, the runner's events endpoint registered at the sandbox as an
 * operator registers it, and customers writing STOP and START to the sandbox (/__sandbox/inbound),
 * delivered to the runner as message_created. What each phone received is counted in the
 * sandbox's own log, never the runner's report.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

import { EVENTS_PATH } from '../../runner/src/http/eventRoutes';
import {
	apiCaller,
	positionalTemplate,
	runCli,
	spawnRunner,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	waitForFeederTick,
} from './support';

jest.setTimeout(240_000);

const TOKEN = 'optout-token-0123456789abcdef';
const HEADER = 'X-Convo-Events';
const SECRET = 'optout-events-secret-3b9d20e1';
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_EVENTS_HEADER_NAME: HEADER,
	RUNNER_EVENTS_HEADER_VALUE: SECRET,
});
let base = '';
const call = apiCaller(() => base, TOKEN);

const phoneOf = (seed: number, i: number) => `4917${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
const phones = (seed: number, count: number) => Array.from({ length: count }, (_, i) => phoneOf(seed, i));

async function sandbox(method: string, path: string, body?: unknown) {
	const response = await fetch(`${runner.sandbox.baseUrl}/__sandbox${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	expect(response.status).toBeLessThan(300);
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	return (await response.json()) as any;
}

/** The customer `phone` writes `text` to the business; resolves once the runner's endpoint answered that delivery. */
async function write(phone: string, text: string): Promise<void> {
	const deliveries = async () =>
		(
			(await sandbox('GET', `/webhooks/deliveries?business=${runner.business.id}`)) as Array<{ statusCode?: number }>
		).filter((d) => d.statusCode === 200).length;
	const before = await deliveries();
	await sandbox('POST', '/inbound', { business: runner.business.id, from: `+${phone}`, text });
	await waitFor(`the runner to take ${text}`, async () => (await deliveries()) > before, 20_000, 50);
}

/** Template sends the sandbox accepted to `phone`. */
const sendsTo = async (phone: string) =>
	(await templateSends(runner.sandbox)).filter((message) => message.to === phone).length;

async function create(recipients: string[], extra: Record<string, unknown> = {}) {
	const created = await call('POST', '/api/campaigns', {
		template_id: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		rate: 40,
		recipients: recipients.map((phone) => ({ phone, 1: 'a', 2: 'b' })),
		...extra,
	});
	expect(created.status).toBeLessThan(300);
	return created.json;
}

async function settled(id: string) {
	return waitFor(
		`campaign ${id} to settle`,
		async () => {
			const got = (await call('GET', `/api/campaigns/${id}`)).json;
			return got.counts.pending + got.counts.claimed === 0 ? got : undefined;
		},
		120_000,
		250,
	);
}

async function rowOf(id: string, phone: string) {
	return (await call('GET', `/api/campaigns/${id}/report?phone=${phone}`)).json[0];
}

beforeAll(async () => {
	base = await startApi(runner);
	runner.spawnWorker();
	await sandbox('POST', '/webhooks', {
		business: runner.business.id,
		url: `${base}${EVENTS_PATH}`,
		method: 'POST',
		headers: { [HEADER]: SECRET },
	});
});

test('STOP mid-campaign: no later message from that campaign or a later one; START re-admits; a transactional campaign still sends; dry runs count it', async () => {
	const audience = phones(1, 240);
	// The last of a 6 s campaign: still pending when STOP comes. (Runs of 50 recipients start a fifth
	// of a second apart and share the rate, so the first of the last run goes out within a second;
	// its last one at the campaign's end.)
	const stopper = audience[audience.length - 1];
	const first = await create(audience);
	await waitFor(
		'the campaign to be sending',
		async () => (await templateSends(runner.sandbox)).length >= 20,
		30_000,
		50,
	);
	expect(await sendsTo(stopper)).toBe(0);
	await write(stopper, ' Stop! ');
	const done = await settled(first.id);

	// Honoured in the claim step: never sent, reported suppressed with the reason; everyone else got one.
	expect(await sendsTo(stopper)).toBe(0);
	const sends = await templateSends(runner.sandbox);
	expect(sends.filter((message) => audience.includes(message.to))).toHaveLength(audience.length - 1);
	expect(done.counts).toMatchObject({ sent: audience.length - 1, suppressed: 1 });
	expect(await rowOf(first.id, stopper)).toMatchObject({
		outcome: 'suppressed',
		error: expect.stringMatching(/^on the suppression list: replied with an opt-out keyword \(keyword, \d{4}-/),
	});
	// The text is never kept: the entry says a keyword came, not what was written.
	expect((await call('GET', `/api/suppressions/${stopper}`)).json).toMatchObject({
		phone: stopper,
		suppressed: true,
		entry: { source: 'keyword', reason: 'replied with an opt-out keyword' },
	});

	// A later campaign keeps the row at create, and its dry run counts it.
	const others = phones(2, 5);
	const dry = await create([stopper, ...others], { dry_run: true });
	expect(dry.counts).toEqual({ accepted: 5, rejected: 0, suppressed: 1, capped: 0 });
	expect(dry.reasons).toEqual([
		expect.objectContaining({ outcome: 'suppressed', count: 1, reason: expect.stringMatching(/opt-out keyword/) }),
	]);
	const second = await create([stopper, ...others]);
	expect(second).toMatchObject({ accepted: 5, suppressed: 1 });
	await settled(second.id);
	expect(await sendsTo(stopper)).toBe(0);
	expect(await rowOf(second.id, stopper)).toMatchObject({ outcome: 'suppressed', attempts: 0 });

	// A transactional campaign sends to it, and says it is transactional.
	const receipt = await create([stopper], { transactional: true });
	expect(receipt.suppressed).toBe(0);
	expect((await settled(receipt.id)).transactional).toBe(true);
	expect(await sendsTo(stopper)).toBe(1);

	// START takes it off: the next campaign sends to it.
	await write(stopper, 'start');
	expect((await call('GET', `/api/suppressions/${stopper}`)).json).toMatchObject({ suppressed: false, entry: null });
	const third = await create([stopper]);
	expect(third.suppressed).toBe(0);
	await settled(third.id);
	expect(await sendsTo(stopper)).toBe(2);
	expect((await call('GET', `/api/campaigns/${third.id}`)).json.transactional).toBe(false);
});

test('the API and the CLI: add, check, list, remove; an import keeps good rows and reports bad ones by line; export', async () => {
	const imported = await call(
		'POST',
		'/api/suppressions/import',
		[
			'phone,reason',
			`+${phoneOf(3, 0)},moved away`,
			'not-a-phone,x',
			',no phone',
			`${phoneOf(3, 1)},`,
			`${phoneOf(3, 0)},twice`,
		].join('\n'),
		{ 'content-type': 'text/csv' },
	);
	expect(imported.status).toBe(200);
	expect(imported.json).toEqual({
		rows: 5,
		added: 2,
		already: 1,
		rejected: 2,
		rejections: [
			{ line: 3, reason: expect.stringMatching(/^phone is not a phone number/) },
			{ line: 4, reason: 'phone is missing' },
		],
	});
	// A rejection never quotes the row.
	expect(JSON.stringify(imported.json)).not.toContain('not-a-phone');
	expect((await call('GET', `/api/suppressions/${phoneOf(3, 0)}`)).json.entry).toMatchObject({
		reason: 'moved away',
		source: 'import',
	});
	expect((await call('GET', `/api/suppressions/${phoneOf(3, 1)}`)).json.entry).toMatchObject({
		reason: 'imported',
		source: 'import',
	});

	const added = await call('POST', '/api/suppressions', {
		phone: `+${phoneOf(3, 2).slice(0, 2)} ${phoneOf(3, 2).slice(2, 5)}-${phoneOf(3, 2).slice(5)}`,
		reason: 'asked on the phone',
	});
	expect(added.json).toMatchObject({
		phone: phoneOf(3, 2),
		reason: 'asked on the phone',
		source: 'operator',
		added: true,
	});
	expect((await call('POST', '/api/suppressions', { phone: phoneOf(3, 2) })).json).toMatchObject({
		added: false,
		reason: 'asked on the phone',
	});
	const bad = await call('POST', '/api/suppressions', { phone: '12' });
	expect(bad.status).toBe(400);
	expect(bad.json).toMatchObject({ field: 'phone', message: expect.stringMatching(/^phone has 2 digits/) });

	const page = (await call('GET', '/api/suppressions?limit=2')).json;
	expect(page).toMatchObject({ total: 3, limit: 2, offset: 0 });
	expect(page.items.map((entry: { phone: string }) => entry.phone)).toEqual([phoneOf(3, 2), expect.any(String)]);
	expect((await call('GET', '/api/suppressions?limit=2&offset=2')).json.items).toHaveLength(1);

	const exported = await call('GET', '/api/suppressions/export');
	const lines = exported.text.trim().split('\n');
	expect(lines[0]).toBe('phone,reason,source,at');
	expect(
		lines
			.slice(1)
			.map((line) => line.split(',')[0])
			.sort(),
	).toEqual([phoneOf(3, 0), phoneOf(3, 1), phoneOf(3, 2)]);

	expect((await call('DELETE', `/api/suppressions/${phoneOf(3, 2)}`)).json).toEqual({
		phone: phoneOf(3, 2),
		removed: true,
	});
	expect((await call('DELETE', `/api/suppressions/${phoneOf(3, 2)}`)).json).toEqual({
		phone: phoneOf(3, 2),
		removed: false,
	});

	// The CLI, on the same list.
	const dir = mkdtempSync(join(tmpdir(), 'convo-suppression-'));
	const file = join(dir, 'optouts.csv');
	writeFileSync(file, `phone\n${phoneOf(4, 0)}\n123\n`);
	const cliImport = await runCli(['suppression', 'import', file, '--json'], runner.env);
	expect(cliImport.code).toBe(0);
	expect(JSON.parse(cliImport.stdout)).toMatchObject({
		rows: 2,
		added: 1,
		rejected: 1,
		rejections: [{ line: 3, reason: expect.stringMatching(/^phone has 3 digits/) }],
	});
	expect((await runCli(['suppression', 'add', phoneOf(4, 1), '--reason', 'complained'], runner.env)).stdout).toMatch(
		new RegExp(`^${phoneOf(4, 1)}: added \\(operator, `),
	);
	expect(
		JSON.parse((await runCli(['suppression', 'check', `+${phoneOf(4, 1)}`, '--json'], runner.env)).stdout),
	).toMatchObject({ suppressed: true, entry: { reason: 'complained' } });
	const badCli = await runCli(['suppression', 'check', 'x1', '--json'], runner.env);
	expect(badCli.code).toBe(1);
	expect(JSON.parse(badCli.stdout).error).toMatch(/^<phone> is not a phone number/);
	expect((await runCli(['suppression', 'remove', phoneOf(4, 1)], runner.env)).stdout.trim()).toBe(
		`${phoneOf(4, 1)}: removed`,
	);
	const cliExport = await runCli(['suppression', 'export'], runner.env);
	expect(cliExport.stdout.trim().split('\n')).toHaveLength(1 + 3);
	expect(
		JSON.parse((await runCli(['suppression', 'list', '--limit', '1', '--json'], runner.env)).stdout),
	).toMatchObject({ total: 3, items: [{ phone: phoneOf(4, 0), source: 'import' }] });
});

test("an import killed (SIGKILL) midway leaves what it wrote; the feeder's tick brings every number's copy up to the list", async () => {
	const { redis, keys } = runner.context;
	const from = runner.business.phoneNumbers[0];
	const dir = mkdtempSync(join(tmpdir(), 'convo-suppression-'));
	const file = join(dir, 'big.csv');
	writeFileSync(file, `phone\n${phones(5, 200_000).join('\n')}\n`);
	// The number has a campaign not finished (scheduled), so it keeps a copy.
	await create([phoneOf(6, 0)], { at: new Date(Date.now() + 86_400_000).toISOString() });
	const before = await redis.zcard(keys.suppression.listed);
	const importing = spawnRunner(['suppression', 'import', file], runner.env);
	// Killed midway, at a moment the list is ahead of the copy (read in one step; one Redis here), as often as not leaving it so.
	const ahead = async () => {
		const [[, listedNow], [, copied]] = (await redis
			.multi()
			.zcard(keys.suppression.listed)
			.hlen(keys.suppression.copy(from))
			.exec()) as [[null, number], [null, number]];
		return listedNow >= before + 20_000 && copied < listedNow;
	};
	await waitFor('the import to be midway, the list ahead of the copy', ahead, 60_000, 5);
	await importing.kill('SIGKILL');
	const listed = await redis.zcard(keys.suppression.listed);
	expect(listed).toBeLessThan(before + 200_000);
	await waitForFeederTick(runner.context);
	await waitForFeederTick(runner.context);
	expect(await redis.hlen(keys.suppression.copy(from))).toBe(listed);
	expect(await redis.get(keys.suppression.copyVersion(from))).toBe(await redis.get(keys.suppression.version));
});

test("a number's copy a crash left behind is repaired by the feeder's tick", async () => {
	const { redis, keys } = runner.context;
	const from = runner.business.phoneNumbers[0];
	const listed = await redis.zrange(keys.suppression.listed, 0, -1);
	expect(listed.length).toBeGreaterThan(0);
	await waitFor(
		'the copy to hold the list',
		async () => (await redis.hlen(keys.suppression.copy(from))) === listed.length,
		10_000,
	);
	// As a process killed between the global write and the copies leaves it: the copy behind the list's version.
	await redis.multi().del(keys.suppression.copy(from)).set(keys.suppression.copyVersion(from), '0').exec();
	await waitForFeederTick(runner.context);
	await waitForFeederTick(runner.context);
	expect((await redis.hkeys(keys.suppression.copy(from))).sort()).toEqual([...listed].sort());
	expect(await redis.get(keys.suppression.copyVersion(from))).toBe(await redis.get(keys.suppression.version));
});
