/**
 * What the control API of a real `convo-runner start` may read on its host (issue 17, items 1, 8
 * and 14). With the default settings it reads no local file: /etc/passwd, /etc/shadow,
 * /proc/self/status, ../../../../etc/hostname, a link pointing out and a path that does not exist
 * get one and the same answer. With RUNNER_SOURCE_DIR it reads files inside that directory only,
 * checked again when a worker opens the file (a scheduled run after its file became a link out
 * fails). No answer, report, Redis key or value, log line, event (a receiver of the test's own) or
 * sandbox item holds a line of those files; a rejected row's reason gives its position and the rule,
 * never its bytes. A row nested 200,000 deep is one rejected row. A create that fails after taking
 * the collection's lease releases it. The CLI still reads any path.
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
	collectionOf,
	clearSandboxCounts,
	feedText,
	freshCollection,
	products,
	range,
	sandboxCounts,
	UPSERT,
	writeFeed,
} from './reindexSupport';
import { dumpKeys, runCli, scanKeys, startApi, useRunnerUnderTest, waitFor, type SpawnedRunner } from './support';

jest.setTimeout(240_000);

const TOKEN = 'local-files-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
/** RUNNER_SOURCE_DIR of the second API process. */
const SOURCE_DIR = mkdtempSync(join(tmpdir(), 'convo-source-dir-'));
/** A link inside the directory that points out of it. */
const LINK_OUT = join(SOURCE_DIR, 'passwd.ndjson');
symlinkSync('/etc/passwd', LINK_OUT);
mkdirSync(join(SOURCE_DIR, 'sub'));
symlinkSync('/etc', join(SOURCE_DIR, 'sub', 'etc'));
/** A dangling link: where it points does not exist (it could point anywhere). */
symlinkSync('/nonexistent/target.ndjson', join(SOURCE_DIR, 'dangling.ndjson'));

/** Every answer, report and event text the test saw: searched for the files' lines at the end. */
const seen: string[] = [];
const apis: SpawnedRunner[] = [];
let base = '';

/** What the receiver of the test's own was sent: raw bodies. */
const events: string[] = [];
let closeReceiver = async () => undefined as void;

async function call(
	method: string,
	path: string,
	body?: unknown,
): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		// A string is sent as it is: JSON text too deep for JSON.stringify.
		body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
	});
	const text = await response.text();
	seen.push(text);
	return { status: response.status, json: (text ? JSON.parse(text) : {}) as Record<string, unknown>, text };
}

async function startApiWith(env: NodeJS.ProcessEnv): Promise<void> {
	base = await startApi(runner, env);
	apis.push(runner.processes[runner.processes.length - 1]);
}

/** POSTs a run and waits for it to settle; its status and report. */
async function runToEnd(body: Record<string, unknown>) {
	const created = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		id_field: 'sku',
		rate: 1000,
		...body,
	});
	expect(created).toMatchObject({ status: 201 });
	const id = String(created.json.id);
	const status = await waitFor(`run ${id} to settle`, async () => {
		const got = await call('GET', `/api/reindex/${id}`);
		return ['completed', 'failed', 'skipped'].includes(String(got.json.state)) ? got.json : undefined;
	});
	const report = (await call('GET', `/api/reindex/${id}/report`)).json;
	return { id, status, report };
}

/** The lines of the host's files a leak would show (long enough not to match by chance). */
function secretLines(): string[] {
	const lines = ['/etc/passwd', '/etc/shadow'].flatMap((path) => readFileSync(path, 'utf8').split('\n'));
	return [
		...lines.filter((line) => line.trim().length >= 8),
		'root:x:0:0',
		'Cpus_allowed_list',
		'SigCgt:',
		'VmPeak:',
		'voluntary_ctxt_switches',
	];
}

const outsidePaths = () => [
	'/etc/passwd',
	'/etc/shadow',
	'/proc/self/status',
	'../../../../etc/hostname',
	LINK_OUT,
	'sub/etc/passwd',
	'sub/etc/no-such-file',
	'dangling.ndjson',
	'/nonexistent/feed.ndjson',
];

/** Each path POSTed twice: as NDJSON, and as CSV with id_field set to the file's first line (which made all of /etc/passwd items). */
async function answersFor(paths: string[]): Promise<string[]> {
	const firstLine = readFileSync('/etc/passwd', 'utf8').split('\n')[0];
	const answers: string[] = [];
	for (const path of paths) {
		for (const settings of [
			{ format: 'ndjson', id_field: 'id' },
			{ format: 'csv', id_field: firstLine },
		]) {
			const answer = await call('POST', '/api/reindex', {
				collection_id: collectionOf(runner),
				source: path,
				...settings,
			});
			answers.push(`${settings.format}: ${answer.status} ${answer.text}`);
			// Before the fix some were runs: let each end before the next takes the collection.
			if (answer.status === 201)
				await waitFor(
					'the run to end',
					async () =>
						['completed', 'failed', 'skipped'].includes(
							String((await call('GET', `/api/reindex/${String(answer.json.id)}`)).json.state),
						),
					60_000,
				);
		}
	}
	return answers;
}

beforeAll(async () => {
	const server = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', () => {
			events.push(body);
			response.writeHead(204).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	closeReceiver = () => new Promise((resolve) => server.close(() => resolve()));
	// Default settings: no RUNNER_SOURCE_DIR.
	await startApiWith({});
	const registered = await call('POST', '/api/webhooks', {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
		events: ['reindex.finished'],
	});
	expect(registered.status).toBe(201);
});

afterAll(async () => {
	await closeReceiver();
});

describe('default settings: the API reads no local file', () => {
	test('a host file, a path out, a link out and a missing path all get the same answer, naming `source`', async () => {
		await clearSandboxCounts(runner);
		const answers = await answersFor(outsidePaths());
		const unique = [...new Set(answers.map((answer) => answer.replace(/^(ndjson|csv): /, '')))];
		expect(unique).toEqual([
			`400 ${JSON.stringify({ status: 400, code: 'validation_failed', message: 'source must be an http(s) URL: this runner reads no local file for API callers (its operator may name a directory for them with RUNNER_SOURCE_DIR)', field: 'source' })}`,
		]);
		expect((await sandboxCounts(runner))(UPSERT)).toBe(0);
	});
});

describe('RUNNER_SOURCE_DIR: files inside it only', () => {
	beforeAll(async () => {
		await apis[0].kill('SIGTERM');
		await startApiWith({ RUNNER_SOURCE_DIR: SOURCE_DIR });
	});

	test('outside the directory (a link inside pointing out too): one answer, whether the path exists or not', async () => {
		const answers = await answersFor(outsidePaths());
		const unique = [...new Set(answers.map((answer) => answer.replace(/^(ndjson|csv): /, '')))];
		expect(unique).toEqual([
			`400 ${JSON.stringify({ status: 400, code: 'validation_failed', message: "source must be an http(s) URL or the path of a file inside the runner's source directory (RUNNER_SOURCE_DIR)", field: 'source' })}`,
		]);
	});

	test('a missing file inside the directory says so, naming `source` as the API calls it', async () => {
		const missing = await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source: 'missing.ndjson',
			id_field: 'sku',
		});
		expect(missing.status).toBe(400);
		expect(missing.json).toEqual({
			status: 400,
			code: 'validation_failed',
			field: 'source',
			message: "source missing.ndjson: no such file in the runner's source directory",
		});
	});

	test('an embedding_json nested 10,000 deep is a 400 naming it, not a 500 that leaves the collection leased', async () => {
		writeFileSync(join(SOURCE_DIR, 'small.ndjson'), feedText(products(range(0, 2)), 'ndjson'));
		const embedding = `{"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`;
		const deep = await call(
			'POST',
			'/api/reindex',
			`{"collection_id":"${collectionOf(runner)}","source":${JSON.stringify(join(SOURCE_DIR, 'small.ndjson'))},"id_field":"sku","embedding_json":${embedding}}`,
		);
		expect(deep.json).toEqual({
			status: 400,
			code: 'validation_failed',
			field: 'embedding_json',
			message: 'embedding_json nests objects or arrays deeper than 64 levels',
		});
		expect(await runner.context.redis.get(runner.context.keys.reindex.lock(collectionOf(runner)))).toBeNull();
	});

	test('a feed inside it syncs (counted at the sandbox); the run records that its source came from the API', async () => {
		await freshCollection(runner);
		await clearSandboxCounts(runner);
		writeFileSync(join(SOURCE_DIR, 'feed.ndjson'), feedText(products(range(0, 30)), 'ndjson'));
		const { status, report } = await runToEnd({ source: 'feed.ndjson' });
		expect(status).toMatchObject({
			state: 'completed',
			counts: expect.objectContaining({ read: 30, created: 30, rejected: 0 }),
		});
		expect(report).toMatchObject({ origin: 'api', source: join(SOURCE_DIR, 'feed.ndjson') });
		expect((await sandboxCounts(runner))(UPSERT)).toBe(30);
	});

	test('the CLI still reads any path it can, and its run says so', async () => {
		await clearSandboxCounts(runner);
		const path = writeFeed(feedText(products(range(100, 110)), 'ndjson'), 'cli.ndjson');
		const ran = await runCli(
			[
				'reindex',
				'run',
				'--collection',
				collectionOf(runner),
				'--source',
				path,
				'--id-field',
				'sku',
				'--rate',
				'1000',
				'--wait',
				'--json',
			],
			runner.env,
		);
		expect(ran.code).toBe(0);
		const { id } = JSON.parse(ran.stdout) as { id: string };
		expect((await call('GET', `/api/reindex/${id}/report`)).json).toMatchObject({
			state: 'completed',
			origin: 'cli',
			source: path,
		});
		expect((await sandboxCounts(runner))(UPSERT)).toBe(10);
	});

	test('rows that are not valid: each reason gives the position and the rule, never a byte of the row', async () => {
		await freshCollection(runner);
		writeFileSync(
			join(SOURCE_DIR, 'bad.ndjson'),
			[
				'{"sku":"b1","title":"fine"}',
				'root:x:0:0:root:/root:/bin/bash',
				'{"sku":"b3","note":"root:x:0:0',
				'{"sku":"b4" "root:x:0:0"}',
				'{"sku":"root:x:0:0:dup"}',
				'{"sku":"root:x:0:0:dup"}',
				'{"root:x:0:0":"no id"}',
			].join('\n') + '\n',
		);
		const ndjson = await runToEnd({ source: join(SOURCE_DIR, 'bad.ndjson') });
		expect(ndjson.report.rejected_rows).toEqual([
			{ line: 2, reason: 'is not JSON: a character stands where JSON allows none' },
			{ line: 3, reason: 'is not JSON: a string is never closed (column 31)' },
			{ line: 4, reason: "is not JSON: a value in an object is not followed by ',' or '}' (column 13)" },
			{ line: 6, reason: 'repeats the id of line 5' },
			{ line: 7, reason: 'has no "sku" (the id_field)' },
		]);

		writeFileSync(join(SOURCE_DIR, 'quote.csv'), 'sku,title\nc1,fine\nc2,"root:x:0:0"Q\nc3,never read\n');
		const quote = await runToEnd({ source: join(SOURCE_DIR, 'quote.csv') });
		expect(quote.status).toMatchObject({
			state: 'failed',
			last_error: `the source could not be read to its end: ${join(SOURCE_DIR, 'quote.csv')} is not valid CSV at line 3: a quoted cell goes on after its closing quote`,
		});

		writeFileSync(join(SOURCE_DIR, 'header.csv'), 'sku,root:x:0:0,root:x:0:0\nh1,a,b\n');
		const header = await runToEnd({ source: join(SOURCE_DIR, 'header.csv') });
		expect(header.status).toMatchObject({
			state: 'failed',
			last_error: `the source could not be read to its end: ${join(SOURCE_DIR, 'header.csv')}: the header names one column twice (columns 2 and 3)`,
		});

		writeFileSync(join(SOURCE_DIR, 'bad.json'), '[{"sku":"j1"}, "root:x:0:0", {"sku": root:x:0:0}]');
		const json = await runToEnd({ source: join(SOURCE_DIR, 'bad.json') });
		expect(json.report.rejected_rows).toEqual([{ line: 2, reason: 'is not a JSON object' }]);
		expect(json.status).toMatchObject({
			state: 'failed',
			last_error: `the source could not be read to its end: ${join(SOURCE_DIR, 'bad.json')} is not a JSON array of objects: after element 2, expected a value`,
		});
	});

	test('a row nested 200,000 deep is one rejected row; the other rows are upserted (NDJSON and a JSON array)', async () => {
		const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
		for (const format of ['ndjson', 'json'] as const) {
			await freshCollection(runner);
			await clearSandboxCounts(runner);
			const rows = [
				...products(range(0, 5)).map((item) => JSON.stringify(item)),
				`{"sku":"deep","x":${nested(200_000)}}`,
				// The limit is 64 levels, the row itself the first: 63 arrays inside it pass, 64 do not.
				`{"sku":"at-limit","x":${nested(63)}}`,
				`{"sku":"over-limit","x":${nested(64)}}`,
				...products(range(5, 10)).map((item) => JSON.stringify(item)),
			];
			writeFileSync(
				join(SOURCE_DIR, `deep.${format}`),
				format === 'ndjson' ? `${rows.join('\n')}\n` : `[${rows.join(',\n')}]`,
			);
			const { status, report } = await runToEnd({ source: join(SOURCE_DIR, `deep.${format}`) });
			expect(status).toMatchObject({
				state: 'completed',
				counts: expect.objectContaining({ read: 13, created: 11, rejected: 2, failed: 0 }),
			});
			expect(report.rejected_rows).toEqual([
				{ line: 6, reason: 'nests objects or arrays deeper than 64 levels' },
				{ line: 8, reason: 'nests objects or arrays deeper than 64 levels' },
			]);
			expect((await sandboxCounts(runner))(UPSERT)).toBe(11);
		}
	});

	test('a schedule whose file became a link out of the directory fails at run time, without quoting it', async () => {
		const file = join(SOURCE_DIR, 'nightly.ndjson');
		writeFileSync(file, feedText(products(range(0, 3)), 'ndjson'));
		const created = await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source: file,
			id_field: 'id',
			cron: '*/2 * * * * *',
		});
		expect(created.status).toBe(201);
		const schedule = (created.json.schedule as { id: string }).id;
		const since = Date.now();
		// Swapped in one step (a rename), as a deploy would swap it.
		symlinkSync('/etc/passwd', `${file}.new`);
		renameSync(`${file}.new`, file);
		const failed = await waitFor(
			'a scheduled run that failed',
			async () => {
				const { runs } = (await call('GET', '/api/reindex')).json as {
					runs: Array<{ id: string; state: string; last_error: string | null }>;
				};
				for (const run of runs.filter((candidate) => candidate.state === 'failed')) {
					const report = (await call('GET', `/api/reindex/${run.id}/report`)).json;
					if (Date.parse(String(report.created_at)) >= since - 2000 && report.source === file) return { run, report };
				}
				return undefined;
			},
			30_000,
		);
		expect(failed.run.last_error).toBe(
			"the source could not be read to its end: source must be an http(s) URL or the path of a file inside the runner's source directory (RUNNER_SOURCE_DIR)",
		);
		expect(failed.report).toMatchObject({
			origin: 'api',
			rejected_rows: [],
			counts: expect.objectContaining({ read: 0 }),
		});
		expect((await call('DELETE', `/api/reindex/schedules/${schedule}`)).status).toBe(200);
	});

	test('a create that fails after taking the collection lease releases it (a Redis error: the runs index is not a sorted set)', async () => {
		writeFileSync(join(SOURCE_DIR, 'lease.ndjson'), feedText(products(range(0, 5)), 'ndjson'));
		const { redis, keys } = runner.context;
		const lease = keys.reindex.lock(collectionOf(runner));
		await waitFor('the collection to be free', async () => (await redis.get(lease)) === null, 30_000);
		const runHashes = async () =>
			(await scanKeys(redis, runner.env.RUNNER_PREFIX as string)).filter((key) => /:reindex:r[^:]+$/.test(key)).length;
		const before = await runHashes();
		// A real fault after the lease is taken: ZADD on the runs index answers WRONGTYPE.
		const saved = await redis.zrange(keys.reindex.runs, 0, -1, 'WITHSCORES');
		await redis.del(keys.reindex.runs);
		await redis.set(keys.reindex.runs, 'not a sorted set');
		const failed = await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source: join(SOURCE_DIR, 'lease.ndjson'),
			id_field: 'sku',
		});
		await redis.del(keys.reindex.runs);
		for (let i = 0; i < saved.length; i += 2) await redis.zadd(keys.reindex.runs, saved[i + 1], saved[i]);
		expect(failed.status).toBe(500);
		expect(await redis.get(lease)).toBeNull();
		// Nothing of the run the caller was told failed stays.
		expect(await runHashes()).toBe(before);
		const again = await runToEnd({ source: join(SOURCE_DIR, 'lease.ndjson') });
		expect(again.status).toMatchObject({ state: 'completed' });
	});
});

test("a campaign row's reason names the rule and the column, never a cell; the phone stays beside it as given", async () => {
	const csv = [
		'phone,1,2,cell-secret-header,buttons',
		'+4917060000001,a,b,,',
		'cell-secret-phone,a,b,,',
		'+49 170 6000 0001,a,b,,',
		'+4917060000002,a,b,https://cell-secret.example/x,',
		'+4917060000003,a,b,,"[{""index"":""cell-secret-index"",""sub_type"":""url"",""text"":""t""}]"',
	].join('\n');
	const query = new URLSearchParams({
		template_id:
			runner.business.templates.find((t) => t.variables.join() === '1,2' && t.buttons.length === 0)?.id ?? '',
		from: runner.business.phoneNumbers[0],
		at: new Date(Date.now() + 3_600_000).toISOString(),
	});
	const response = await fetch(`${base}/api/campaigns?${query}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
		body: `${csv}\n`,
	});
	const created = (await response.json()) as {
		id: string;
		rejections: Array<{ line: number; phone: string; reason: string }>;
	};
	expect(response.status).toBe(201);
	expect(created.rejections).toEqual([
		{
			line: 3,
			phone: 'cell-secret-phone',
			reason: 'phone is not a phone number: only digits, spaces, dashes, brackets and a leading + are allowed',
		},
		{ line: 4, phone: '+49 170 6000 0001', reason: 'phone is already in this campaign (line 2)' },
		{
			line: 5,
			phone: '+4917060000002',
			reason:
				'the variable in column 4 holds a URL; the platform refuses URLs as body variables: send a dynamic URL button value in buttons',
		},
		{ line: 6, phone: '+4917060000003', reason: 'buttons[0].index must be an integer (the button position)' },
	]);
	await call('POST', `/api/campaigns/${created.id}/cancel`);
});

test('no answer, report, Redis key or value, log line, event or sandbox item holds a line of the host files read', async () => {
	// Every run's report, whichever test made it.
	const { runs } = (await call('GET', '/api/reindex')).json as { runs: Array<{ id: string }> };
	for (const run of runs) await call('GET', `/api/reindex/${run.id}/report`);
	await waitFor('the events of settled runs', async () => events.length >= runs.length || undefined, 30_000).catch(
		() => undefined,
	);
	const items = await (
		await fetch(`${runner.sandbox.externalUrl}/search/items?collection_id=${collectionOf(runner)}`, {
			headers: { 'x-api-key': runner.business.apiKey },
		})
	).text();
	const places: Record<string, string> = {
		answers: seen.join('\n'),
		redis: await dumpKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string),
		logs: apis.map((api) => api.output()).join('\n'),
		events: events.join('\n'),
		sandbox: items,
	};
	expect(events.length).toBeGreaterThan(0);
	const leaks = Object.entries(places).flatMap(([where, text]) =>
		secretLines()
			.filter((line) => text.includes(line))
			.map((line) => `${where}: ${line.slice(0, 12)}…`),
	);
	expect([...new Set(leaks)]).toEqual([]);
});
