/**
 * Bad input, through the core library (createCampaign) and, for the refusals, the CLI with --json:
 * a source that cannot be a campaign is refused and creates nothing; a bad row is rejected with its
 * line and reason and never sent while the others go; a template or key the service refuses stops
 * the whole campaign after its first answer (attempts counted by a proxy in front of the sandbox,
 * since the sandbox's log holds accepted sends only). No secret appears anywhere.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { API_KEY_PREFIX } from '../../sandbox/src/fixture';
import { UserError } from '../../runner/src/errors';
import { campaignStatus, cancel, createCampaign, type CreateAnswer } from '../../runner/src/core/campaigns';
import type { CampaignSettings } from '../../runner/src/campaigns/schema';
import {
	dumpKeys,
	expectNoSecret,
	expectReportMatchesLog,
	positionalTemplate,
	report,
	runCli,
	scanKeys,
	startCountingProxy,
	startRunnerUnderTest,
	templateSends,
	useRedisServer,
	waitFor,
	type RunnerUnderTest,
	type SandboxMessage,
	type SpawnedRunner,
} from './support';

jest.setTimeout(180_000);

let redis: Awaited<ReturnType<typeof useRedisServer>>;
let runner: RunnerUnderTest;
let proxy: Awaited<ReturnType<typeof startCountingProxy>>;
let worker: SpawnedRunner;
let dir: string;
/** Every error message, report and CLI output the tests saw, for the secret scan at the end. */
const seen: Record<string, string> = {};

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), 'convo-input-'));
	redis = await useRedisServer();
	runner = await startRunnerUnderTest(redis.url, { RUNNER_CONCURRENCY: '10' });
	proxy = await startCountingProxy(runner.sandbox.baseUrl);
	worker = runner.spawnWorker({ CONVO_EXTERNAL_URL: `${proxy.url}/api/external/v2` });
});
afterAll(async () => {
	await runner?.close();
	await proxy?.close();
	await redis?.stop();
	rmSync(dir, { recursive: true, force: true });
});

let files = 0;
function writeSource(name: string, content: string | Buffer): string {
	const path = join(dir, `${files++}-${name}`);
	writeFileSync(path, content);
	return path;
}

const phoneOf = (seed: number, i: number) => `4917${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;

function settings(source: string, overrides: Partial<CampaignSettings> = {}): CampaignSettings {
	return {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source,
		rate: 100,
		...overrides,
	};
}

async function created(answer: Promise<CreateAnswer>) {
	const result = await answer;
	if (result.kind !== 'campaign') throw new Error('expected a campaign');
	return result;
}

/** The campaign records in Redis (hash, snapshot, ledger): what "nothing created" is about. */
async function campaignKeys(): Promise<string[]> {
	const keys = await scanKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string);
	return keys.filter((key) => /:campaign:[^:]+(:rcp|:ledger)?$/.test(key)).sort();
}

/** Until nothing of the campaign moves any more: not running, nothing claimed, nothing pending unless paused. */
async function untilSettled(id: string, context = runner.context) {
	return waitFor(
		`campaign ${id} to settle`,
		async () => {
			const status = await campaignStatus(context, id);
			const open = status.counts.claimed + (status.state === 'paused' ? 0 : status.counts.pending);
			return status.state !== 'running' && open === 0 ? status : undefined;
		},
		120_000,
	);
}

function sendsTo(sends: SandboxMessage[], phones: string[]): SandboxMessage[] {
	const wanted = new Set(phones);
	return sends.filter((message) => wanted.has(message.to));
}

/** Refused at create, by the core and by the CLI: a clear error, exit 1, one JSON document, nothing stored. */
async function expectRefused(name: string, source: string, message: RegExp): Promise<void> {
	const before = await campaignKeys();
	// Bounded: a source whose error never reaches the parser would leave create waiting forever.
	let timer: NodeJS.Timeout | undefined;
	const error = await Promise.race([
		createCampaign(runner.context, settings(source)).then(
			() => undefined,
			(thrown: Error) => thrown,
		),
		new Promise<Error>(
			(resolve) =>
				(timer = setTimeout(() => resolve(new Error(`create did not answer within 30 s for ${name}`)), 30_000)),
		),
	]);
	clearTimeout(timer);
	expect(error).toBeInstanceOf(UserError);
	expect(error?.message).toMatch(/^Nothing was created/);
	expect(error?.message).toMatch(message);
	seen[`${name}: error`] = error?.message ?? '';

	const business = runner.business;
	const cli = await runCli(
		[
			'campaign',
			'create',
			'--template',
			positionalTemplate(business).id,
			'--from',
			business.phoneNumbers[0],
			'--recipients',
			source,
			'--json',
		],
		runner.env,
	);
	expect(cli.code).toBe(1);
	const document = JSON.parse(cli.stdout) as Record<string, unknown>;
	expect(Object.keys(document)).toEqual(['error']);
	expect(document.error).toMatch(message);
	seen[`${name}: CLI`] = cli.stdout + cli.stderr;

	expect(await campaignKeys()).toEqual(before);
}

describe('a source that cannot be a campaign is refused and creates nothing', () => {
	test('an empty file, a header without rows, an empty JSON array, an empty NDJSON file', async () => {
		await expectRefused('empty csv', writeSource('empty.csv', ''), /empty/);
		await expectRefused('header only', writeSource('header.csv', 'phone,1,2\n'), /holds no recipient/);
		await expectRefused('empty json', writeSource('empty.json', '[]'), /holds no recipient/);
		await expectRefused('empty ndjson', writeSource('empty.ndjson', '\n\n'), /holds no recipient/);
	});

	test('wrong columns: no phone column, named in the error', async () => {
		const rows = Array.from({ length: 5 }, (_, i) => `+${phoneOf(10, i)},Customer ${i},order ${i}`);
		await expectRefused(
			'no phone column',
			writeSource('numbers.csv', ['mobile,1,2', ...rows].join('\n')),
			/no "phone" column/,
		);
	});

	test('a binary file, whatever its name says', async () => {
		const png = Buffer.concat([
			Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
			Buffer.alloc(2048, 7),
		]);
		await expectRefused('binary csv', writeSource('recipients.csv', png), /binary/);
		await expectRefused('binary json', writeSource('recipients.json', png), /binary/);
		await expectRefused('binary ndjson', writeSource('recipients.ndjson', png), /binary/);
	});

	test('a JSON file that is not a JSON array of objects', async () => {
		await expectRefused('broken json', writeSource('broken.json', '[{"phone": "4917012345678", '), /not a JSON array/);
	});

	test('a template id that is not a UUID is refused naming --template, before anything is read', async () => {
		const error = await createCampaign(
			runner.context,
			settings(writeSource('fine.csv', `phone\n+${phoneOf(11, 0)}\n`), { templateId: 'welcome' }),
		).catch((thrown: Error) => thrown);
		expect(error).toBeInstanceOf(UserError);
		expect((error as Error).message).toMatch(/--template/);
	});
});

test('bad rows (10% invalid phones, duplicates, wrong cell counts, broken buttons) are rejected with their line; the rest are sent once', async () => {
	const lines = ['phone,1,2,buttons'];
	const expected = new Map<number, RegExp>();
	const good: string[] = [];
	const invalid = ['12345', 'abc', '+49 170 12x4567', '1234567890123456', ''];
	for (let i = 0; i < 200; i++) {
		const line = lines.length + 1;
		if (i % 10 === 3) {
			const phone = invalid[(i / 10) % invalid.length | 0];
			lines.push(`${phone},Customer ${i},order ${i},`);
			expected.set(line, phone === '' ? /phone is missing/ : /phone/);
		} else if (i % 20 === 7) {
			// The phone of the row before, written differently: the same number once normalized.
			const previous = phoneOf(12, i - 1);
			lines.push(`+${previous.slice(0, 2)} ${previous.slice(2, 5)}-${previous.slice(5)},Customer ${i},order ${i},`);
			expected.set(line, new RegExp(`phone is already in this campaign \\(line ${line - 1}\\)`));
		} else {
			good.push(phoneOf(12, i));
			lines.push(`+${phoneOf(12, i)},Customer ${i},order ${i},`);
		}
	}
	lines.push(`+${phoneOf(12, 500)},only two cells`);
	expected.set(lines.length, /has 2 cells; the header has 4/);
	lines.push(`+${phoneOf(12, 501)},Customer,order,{not json`);
	expected.set(lines.length, /buttons is not JSON/);
	lines.push(`+${phoneOf(12, 502)},Customer,order,extra,cells`);
	expected.set(lines.length, /has 5 cells; the header has 4/);

	const campaign = await created(
		createCampaign(runner.context, settings(writeSource('mixed.csv', `${lines.join('\n')}\n`))),
	);
	expect(campaign.accepted).toBe(good.length);
	expect(campaign.rejected).toBe(expected.size);
	expect(campaign.rejections.length).toBeGreaterThan(0);
	for (const rejection of campaign.rejections) expect(rejection.reason).toMatch(expected.get(rejection.line) as RegExp);

	const status = await untilSettled(campaign.id);
	expect(status.state).toBe('completed');
	const rows = await report(runner.context, campaign.id);
	seen['mixed: report'] = JSON.stringify(rows);
	expect(rows).toHaveLength(lines.length - 1);
	const rejected = rows.filter((row) => row.outcome === 'rejected');
	expect(rejected.map((row) => row.line)).toEqual([...expected.keys()]);
	for (const row of rejected) {
		expect(row.error).toMatch(new RegExp(`^line ${row.line}: `));
		expect(row.error).toMatch(expected.get(row.line) as RegExp);
		expect(row.attempts).toBe(0);
	}
	expect(rows.filter((row) => row.outcome === 'sent').map((row) => row.phone)).toEqual(good);

	// The service's own log: each good phone exactly once; no rejected row sent, duplicates included.
	const sends = await templateSends(runner.sandbox);
	expectReportMatchesLog(rows, sends);
	const campaignPhones = [...good, phoneOf(12, 500), phoneOf(12, 501), phoneOf(12, 502)];
	expect(sendsTo(sends, campaignPhones)).toHaveLength(good.length);

	// The CLI's report is one JSON document with the same rows. Delivery tracking goes on meanwhile
	// (its columns move between the two reads), so the rows are compared without them.
	const cli = await runCli(['campaign', 'report', campaign.id, '--json'], runner.env);
	expect(cli.code).toBe(0);
	const TRACKED = ['delivery', 'delivered_at', 'read_at', 'replied_at', 'delivery_error'];
	const untracked = (list: object[]) =>
		list.map((row) => Object.fromEntries(Object.entries(row).filter(([column]) => !TRACKED.includes(column))));
	expect(untracked(JSON.parse(cli.stdout) as object[])).toEqual(untracked(rows));
});

test('a phone repeated 50,000 rows after its first line is rejected with its line; the staged phone index is kept as the campaign index (phone -> line:index)', async () => {
	// The repeat is 50 write batches after its first row, far beyond the rows a create holds at once:
	// it is found only through the phones staged in Redis. Scheduled for tomorrow, then cancelled: nothing is sent.
	const gap = 50_000;
	const lines = ['phone,1,2', ...Array.from({ length: gap }, (_, i) => `+${phoneOf(21, i)},Customer ${i},order ${i}`)];
	const first = phoneOf(21, 0);
	// The first row's phone, written differently: the same number once normalized.
	lines.push(`00${first},Customer again,order again`);
	const repeatLine = lines.length;
	const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
	const campaign = await created(
		createCampaign(runner.context, settings(writeSource('gap.csv', `${lines.join('\n')}\n`), { at: tomorrow })),
	);
	try {
		expect({ total: campaign.total, accepted: campaign.accepted, rejected: campaign.rejected }).toEqual({
			total: gap + 1,
			accepted: gap,
			rejected: 1,
		});
		expect(campaign.rejections).toEqual([
			{ line: repeatLine, phone: `00${first}`, reason: 'phone is already in this campaign (line 2)' },
		]);
		const keys = await scanKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string);
		// The staged phone index found the repeat and became the campaign's (a reply finds its recipient there): nothing staged is left.
		expect(keys.filter((key) => key.includes(':staging:'))).toEqual([]);
		const phones = runner.context.keys.phones(runner.business.phoneNumbers[0], campaign.id);
		expect(await runner.context.redis.hlen(phones)).toBe(gap);
		expect(await runner.context.redis.hget(phones, first)).toBe('2:0');
	} finally {
		await cancel(runner.context, campaign.id);
	}
	const rows = await report(runner.context, campaign.id);
	expect(rows.filter((row) => row.outcome === 'rejected')).toEqual([
		expect.objectContaining({
			line: repeatLine,
			error: `line ${repeatLine}: phone is already in this campaign (line 2)`,
		}),
	]);
});

test('a JSON array and an NDJSON file with the same rows make the same campaign', async () => {
	const objects: Array<Record<string, unknown>> = Array.from({ length: 20 }, (_, i) => ({
		phone: `+49 17${String(i).padStart(2, '0')} 130000`,
		1: `Customer ${i}`,
		2: i,
	}));
	objects[5] = { ...objects[5], phone: '49-17' };
	const [jsonFrom, ndjsonFrom] = runner.business.phoneNumbers;
	const fromJson = await created(
		createCampaign(
			runner.context,
			settings(writeSource('rows.json', JSON.stringify(objects, null, 2)), { from: jsonFrom }),
		),
	);
	const fromNdjson = await created(
		createCampaign(
			runner.context,
			settings(writeSource('rows.ndjson', objects.map((row) => JSON.stringify(row)).join('\n')), { from: ndjsonFrom }),
		),
	);
	for (const campaign of [fromJson, fromNdjson]) {
		expect({ accepted: campaign.accepted, rejected: campaign.rejected }).toEqual({ accepted: 19, rejected: 1 });
		expect(campaign.rejections).toEqual([{ line: 6, phone: '49-17', reason: expect.stringMatching(/phone/) }]);
	}
	expect((await untilSettled(fromJson.id)).state).toBe('completed');
	expect((await untilSettled(fromNdjson.id)).state).toBe('completed');

	const sends = await templateSends(runner.sandbox);
	const jsonRows = await report(runner.context, fromJson.id);
	const ndjsonRows = await report(runner.context, fromNdjson.id);
	const shape = (row: (typeof jsonRows)[number]) => ({ line: row.line, phone: row.phone, outcome: row.outcome });
	expect(ndjsonRows.map(shape)).toEqual(jsonRows.map(shape));
	expect(jsonRows.filter((row) => row.outcome === 'sent')).toHaveLength(19);
	expectReportMatchesLog(
		jsonRows,
		sends.filter((message) => message.from === jsonFrom),
	);
	expectReportMatchesLog(
		ndjsonRows,
		sends.filter((message) => message.from === ndjsonFrom),
	);
	// Numbers and strings reach the template as its variables, from either format.
	const first = sends.find(
		(message) => message.from === ndjsonFrom && message.to === String(objects[0].phone).replace(/\D/g, ''),
	);
	expect(first?.template?.variables).toEqual({ 1: 'Customer 0', 2: '0' });
});

describe('a refusal no recipient can get past stops the whole campaign after its first answer: 404 fails it, 403 and 401 pause it (nothing lost)', () => {
	const attemptsWith = (templateId: string) =>
		proxy.requests.filter(
			(url) => url.pathname.endsWith('/send-template') && url.searchParams.get('template_id') === templateId,
		).length;

	async function expectStopped(templateId: string, seed: number, reason: RegExp, paused = false) {
		const phones = Array.from({ length: 300 }, (_, i) => phoneOf(seed, i));
		const source = writeSource(
			'many.csv',
			['phone,1,2', ...phones.map((phone, i) => `${phone},Customer ${i},order ${i}`)].join('\n'),
		);
		const campaign = await created(createCampaign(runner.context, settings(source, { templateId })));
		const status = await untilSettled(campaign.id);
		expect(status.state).toBe(paused ? 'paused' : 'failed');
		expect(status.last_error).toMatch(reason);
		// Paused: every recipient still pending, to send once the template is fixed; failed: every one not_sent.
		expect(status.counts).toMatchObject(
			paused ? { pending: 300, claimed: 0, sent: 0, not_sent: 0 } : { pending: 0, claimed: 0, sent: 0, not_sent: 300 },
		);
		if (paused) expect(status.paused_reason).toBe('template_refused');

		// Far fewer than 300 were tried: at most what was in flight when the first answer came.
		const attempts = attemptsWith(templateId);
		expect(attempts).toBeGreaterThanOrEqual(1);
		expect(attempts).toBeLessThanOrEqual(30);
		const rows = await report(runner.context, campaign.id);
		expect(rows.reduce((sum, row) => sum + row.attempts, 0)).toBe(attempts);
		const outcome = paused ? 'pending' : 'not_sent';
		expect(rows.every((row) => row.outcome === outcome)).toBe(true);
		expect(rows.filter((row) => row.error !== null && reason.test(row.error)).length).toBe(paused ? attempts : 300);
		expect(sendsTo(await templateSends(runner.sandbox), phones)).toEqual([]);
		seen[`${templateId}: status`] = JSON.stringify(status);
		seen[`${templateId}: report`] = JSON.stringify(rows);
	}

	test('a template of another business (403)', async () => {
		const foreign = runner.sandbox.fixture.businesses[1].templates[0];
		await expectStopped(foreign.id, 20, /^403: .*template_id: the template .* belongs to another business/, true);
	});

	test('a template that does not exist (the sandbox answers 404)', async () => {
		await expectStopped(
			'00000000-0000-4000-8000-00000000abcd',
			21,
			/^404: .*template_id: no template with id 00000000-0000-4000-8000-00000000abcd/,
		);
	});

	test('a wrong API key (401): the reason names CONVO_API_KEY and never shows the key', async () => {
		const wrongKey = `${API_KEY_PREFIX}not-the-key-of-any-business-0123456789`;
		const other = await startRunnerUnderTest(redis.url, { CONVO_API_KEY: wrongKey });
		const otherProxy = await startCountingProxy(other.sandbox.baseUrl);
		try {
			const otherWorker = other.spawnWorker({ CONVO_EXTERNAL_URL: `${otherProxy.url}/api/external/v2` });
			const phones = Array.from({ length: 300 }, (_, i) => phoneOf(22, i));
			const source = writeSource(
				'keyed.csv',
				['phone,1,2', ...phones.map((phone, i) => `${phone},Customer ${i},order ${i}`)].join('\n'),
			);
			const campaign = await created(
				createCampaign(other.context, {
					templateId: positionalTemplate(other.business).id,
					from: other.business.phoneNumbers[0],
					source,
					rate: 100,
				}),
			);
			const status = await untilSettled(campaign.id, other.context);
			expect(status.state).toBe('paused');
			expect(status.paused_reason).toBe('unauthorized');
			expect(status.last_error).toMatch(/^401: .*CONVO_API_KEY/);
			expect(status.counts).toMatchObject({ pending: 300, claimed: 0, sent: 0, not_sent: 0 });
			const attempts = otherProxy.requests.filter((url) => url.pathname.endsWith('/send-template')).length;
			expect(attempts).toBeGreaterThanOrEqual(1);
			expect(attempts).toBeLessThanOrEqual(30);
			expect(await templateSends(other.sandbox)).toEqual([]);

			const rows = await report(other.context, campaign.id);
			const places = {
				status: JSON.stringify(status),
				report: JSON.stringify(rows),
				redis: await dumpKeys(other.context.redis, other.env.RUNNER_PREFIX as string),
				worker: otherWorker.output(),
			};
			expect(
				Object.entries(places)
					.filter(([, text]) => text.includes(wrongKey))
					.map(([where]) => where),
			).toEqual([]);
			expectNoSecret(other.business, places);
		} finally {
			await other.close();
			await otherProxy.close();
		}
	});
});

test('no secret in any Redis key or value of the run, in the worker output, the reports or the errors', async () => {
	expect(Object.keys(seen).length).toBeGreaterThan(10);
	expectNoSecret(runner.business, {
		...seen,
		redis: await dumpKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string),
		worker: worker.output(),
	});
});
