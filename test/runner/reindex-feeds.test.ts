/**
 * Bad feeds give clear per-row or whole-run errors, never a crash: rows that are not JSON, have no
 * id or repeat one, and a 10 MB single line are rejected with their line (the rest is upserted,
 * deactivation is skipped and the report says why); a file that is not JSON fails the run. The
 * CLI's `--json` documents, and the content hash's rules.
 */
import { createReindex, listReindexRuns, listReindexSchedules, reindexReport } from '../../runner/src/core/reindex';
import { contentHash } from '../../runner/src/reindex/contentHash';
import { runScheduledReindex } from '../../runner/src/reindex/create';
import { getRun } from '../../runner/src/reindex/store';
import { runCli, useRunnerUnderTest, waitFor } from './support';
import {
	activeIds,
	collectionOf,
	clearSandboxCounts,
	sandboxCounts,
	feedText,
	freshCollection,
	products,
	range,
	settled,
	UPSERT,
	writeFeed,
} from './reindexSupport';

jest.setTimeout(120_000);

/** How long a paused every-second schedule is watched for runs it must not start. */
const PAUSED_FOR_MS = 4000;

const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '10' });

beforeAll(() => {
	runner.spawnWorker();
});
beforeEach(async () => {
	await freshCollection(runner);
	await clearSandboxCounts(runner);
});

async function run(source: string, extra: { format?: string; idField?: string } = {}) {
	const answer = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source,
		idField: 'sku',
		deactivateMissing: true,
		rate: 1000,
		...extra,
	});
	if (answer.kind !== 'run') throw new Error('expected a run');
	return settled(runner.context, answer.status.id);
}

test('bad NDJSON rows are rejected with their line and reason; the good rows are upserted; deactivation is skipped, saying why', async () => {
	const good = products(range(0, 5));
	const lines = [
		JSON.stringify(good[0]),
		'{"sku": "p1", "title": broken}',
		JSON.stringify({ title: 'no id here' }),
		JSON.stringify(good[1]),
		JSON.stringify({ ...good[0], title: 'the same id again' }),
		'[1, 2, 3]',
		JSON.stringify({ sku: 'huge', text: 'x'.repeat(10 * 1024 * 1024) }),
		JSON.stringify({ sku: { nested: true } }),
		JSON.stringify(good[2]),
	];
	const status = await run(writeFeed(`${lines.join('\n')}\n`, 'bad.ndjson'));
	expect(status.state).toBe('completed');
	expect(status.counts).toEqual({
		read: 9,
		unchanged: 0,
		created: 3,
		updated: 0,
		deactivated: 0,
		rejected: 6,
		failed: 0,
	});
	expect((await sandboxCounts(runner))(UPSERT)).toBe(3);
	const report = await reindexReport(runner.context, status.id);
	expect(report.rejected_rows).toEqual([
		{ line: 2, reason: expect.stringMatching(/^is not JSON: /) },
		{ line: 3, reason: 'has no "sku" (the --id-field)' },
		{ line: 5, reason: 'repeats the id of line 1' },
		{ line: 6, reason: 'is not a JSON object' },
		{ line: 7, reason: 'is 10.0 MB; a record may be at most 1 MB' },
		{ line: 8, reason: 'has a "sku" that is not a string or a number' },
	]);
	expect(report.deactivation).toMatch(/^skipped: 6 source rows were rejected/);
	expect(await activeIds(runner)).toEqual(['p0', 'p1', 'p2', 'sku-1']);
});

test('a 10 MB element of a JSON array and a CSV row with the wrong number of cells are rejected on their own', async () => {
	const items = products(range(0, 3));
	const json = await run(
		writeFeed(JSON.stringify([items[0], { sku: 'huge', text: 'y'.repeat(10 * 1024 * 1024) }, items[1]]), 'big.json'),
	);
	expect(json.counts).toMatchObject({ read: 3, created: 2, rejected: 1 });
	expect((await reindexReport(runner.context, json.id)).rejected_rows).toEqual([
		{ line: 2, reason: 'is 10.0 MB as JSON; an item may be at most 1 MB' },
	]);

	const csv = await run(writeFeed('sku,title\np10,Ten\np11,Eleven,extra\n,no id\np12,Twelve\n', 'rows.csv'));
	expect(csv.counts).toMatchObject({ read: 4, created: 2, rejected: 2 });
	expect((await reindexReport(runner.context, csv.id)).rejected_rows).toEqual([
		{ line: 3, reason: 'has 3 cells; the header has 2' },
		{ line: 4, reason: 'has no "sku" (the --id-field)' },
	]);
});

test('a feed that is not JSON at all, or not an array, fails the whole run with the reason and sends nothing', async () => {
	const notJson = await run(writeFeed('<html>this is not a feed</html>', 'page.json'));
	expect(notJson.state).toBe('failed');
	expect(notJson.last_error).toMatch(
		/^the source could not be read to its end: .*page\.json is not a JSON array of objects: /,
	);
	const object = await run(writeFeed('{"items": []}', 'object.json'));
	expect(object.state).toBe('failed');
	expect(object.last_error).toMatch(/is not a JSON array of objects/);
	const cut = await run(writeFeed('[{"sku": "p1"}, {"sku": "p2", "ti', 'cut.json'));
	expect(cut.state).toBe('failed');
	expect(cut.last_error).toMatch(/cut\.json is not a JSON array of objects/);
	expect(cut.deactivation).toMatch(/^skipped: the source was not read to its end/);
	const missing = createReindex(runner.context, {
		collection: collectionOf(runner),
		source: '/nonexistent/feed.ndjson',
		idField: 'sku',
	});
	await expect(missing).rejects.toThrow('--source /nonexistent/feed.ndjson: no such file');
	// Only p1, read before the cut, was sent.
	expect((await sandboxCounts(runner))(UPSERT)).toBe(1);
});

test('CLI: run --wait --json, status, report and list print one JSON document each; bad flags name the flag', async () => {
	const path = writeFeed(feedText(products(range(0, 20)), 'ndjson'), 'feed.ndjson');
	const collection = collectionOf(runner);
	const ran = await runCli(
		[
			'reindex',
			'run',
			'--collection',
			collection,
			'--source',
			path,
			'--id-field',
			'sku',
			'--rate',
			'500',
			'--wait',
			'--json',
		],
		runner.env,
	);
	expect(ran.code).toBe(0);
	const final = JSON.parse(ran.stdout);
	expect(Object.keys(final).sort()).toEqual(['counts', 'eta_seconds', 'id', 'last_error', 'rate', 'state']);
	expect(final).toMatchObject({
		state: 'completed',
		counts: { read: 20, unchanged: 0, created: 20, updated: 0, deactivated: 0, rejected: 0, failed: 0 },
		last_error: null,
	});

	const status = await runCli(['reindex', 'status', final.id, '--json'], runner.env);
	expect(status.code).toBe(0);
	expect(JSON.parse(status.stdout)).toEqual({ ...final, eta_seconds: 0, rate: 0 });

	const report = await runCli(['reindex', 'report', final.id, '--json'], runner.env);
	expect(JSON.parse(report.stdout)).toMatchObject({
		id: final.id,
		collection,
		id_field: 'sku',
		deactivation: 'not asked: --deactivate-missing was not given',
		rejected_rows: [],
	});
	const list = await runCli(['reindex', 'list', '--json'], runner.env);
	expect(JSON.parse(list.stdout).runs.map((r: { id: string }) => r.id)).toContain(final.id);

	const bad = await runCli(
		['reindex', 'run', '--collection', 'not-a-uuid', '--source', path, '--id-field', 'sku', '--rate', '5000', '--json'],
		runner.env,
	);
	expect(bad.code).toBe(1);
	const { error } = JSON.parse(bad.stdout);
	expect(error).toContain('--collection must be the UUID of a search collection');
	expect(error).toContain('--rate may be at most 1000 upserts per second');
	const unknown = await runCli(['reindex', 'status', 'rnosuchrun', '--json'], runner.env);
	expect(unknown.code).toBe(1);
	expect(JSON.parse(unknown.stdout)).toEqual({ error: 'No reindex run with id rnosuchrun' });
});

test('the content hash ignores key order and changes with the item, the embedding and active', () => {
	const item = { sku: 'a', title: 'T', specs: { w: 1, c: ['r'] } };
	const reordered = { specs: { c: ['r'], w: 1 }, title: 'T', sku: 'a' };
	expect(contentHash(reordered, undefined, true)).toBe(contentHash(item, undefined, true));
	expect(contentHash({ ...item, title: 'U' }, undefined, true)).not.toBe(contentHash(item, undefined, true));
	expect(contentHash(item, { text: 'T' }, true)).not.toBe(contentHash(item, undefined, true));
	expect(contentHash(item, undefined, false)).not.toBe(contentHash(item, undefined, true));
	expect(contentHash(item, undefined, true)).toMatch(/^[\w-]{16}$/);
});

test('--cron runs the reindex on its schedule, each firing a run of its own; unschedule stops it', async () => {
	const path = writeFeed(feedText(products(range(0, 10)), 'ndjson'), 'feed.ndjson');
	const earlier = new Set((await listReindexRuns(runner.context)).map((run) => run.id));
	const answer = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source: path,
		idField: 'sku',
		cron: '*/2 * * * * *',
		tz: 'Europe/Berlin',
	});
	if (answer.kind !== 'schedule') throw new Error('expected a schedule');
	expect(answer.schedule).toMatchObject({
		cron: '*/2 * * * * *',
		tz: 'Europe/Berlin',
		id_field: 'sku',
		rate_limit: 100,
	});
	const runs = await waitFor(
		'two scheduled runs to complete',
		async () => {
			const listed = (await listReindexRuns(runner.context)).filter(
				(run) => !earlier.has(run.id) && run.state === 'completed',
			);
			return listed.length >= 2 ? listed : undefined;
		},
		30_000,
	);
	// The first created the items; the later ones found them unchanged.
	expect(runs.map((run) => run.counts.created).sort()).toEqual([...Array(runs.length - 1).fill(0), 10]);
	expect((await listReindexSchedules(runner.context)).map((schedule) => schedule.id)).toEqual([answer.schedule.id]);
	const cli = await runCli(['reindex', 'unschedule', answer.schedule.id, '--json'], runner.env);
	expect(JSON.parse(cli.stdout)).toEqual({ id: answer.schedule.id, removed: true });
	expect(await listReindexSchedules(runner.context)).toEqual([]);
	await expect(
		createReindex(runner.context, {
			collection: collectionOf(runner),
			source: path,
			idField: 'sku',
			cron: 'not a cron',
		}),
	).rejects.toThrow('--cron "not a cron" with --tz "UTC" is not a valid schedule');
});

test('a paused reindex schedule starts no run at its times and lists as paused; resumed, it starts them again from its next time', async () => {
	const path = writeFeed(feedText(products(range(0, 3)), 'ndjson'), 'paused.ndjson');
	const earlier = new Set((await listReindexRuns(runner.context)).map((run) => run.id));
	const created = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source: path,
		idField: 'sku',
		cron: '* * * * * *',
	});
	if (created.kind !== 'schedule') throw new Error('expected a schedule');
	const id = created.schedule.id;
	expect(created.schedule).toMatchObject({ state: 'active', next_run_at: expect.any(String), source: path });
	/** When each run of this test's schedule was created (epoch ms). */
	const runTimes = async () =>
		Promise.all(
			(await listReindexRuns(runner.context))
				.filter((run) => !earlier.has(run.id))
				.map(async (run) => (await getRun(runner.context, run.id)).createdAt),
		);
	await waitFor('a first run', async () => ((await runTimes()).length > 0 ? true : undefined), 30_000, 100);

	const paused = await runCli(['reindex', 'pause', id], runner.env);
	const pausedAt = Date.now();
	expect({ code: paused.code, out: paused.stdout.trim() }).toEqual({ code: 0, out: `schedule ${id}: paused` });
	expect(await listReindexSchedules(runner.context)).toEqual([
		expect.objectContaining({ id, state: 'paused', next_run_at: null, paused_at: expect.any(String) }),
	]);
	const listed = await runCli(['reindex', 'list'], runner.env);
	expect(listed.stdout).toContain(`schedule ${id}: * * * * * * (UTC) `);
	expect(listed.stdout).toMatch(/ \(paused\)\n/);
	// A firing queued before its job scheduler went makes nothing.
	const runsBefore = (await runTimes()).length;
	expect(await runScheduledReindex(runner.context, id, 'a firing queued before the pause')).toBeUndefined();
	expect(await runTimes()).toHaveLength(runsBefore);
	// Four of its times pass (it fires every second, the finest a cron pattern takes); a firing already
	// under way at the pause may still make its run within a second.
	await new Promise((resolve) => setTimeout(resolve, PAUSED_FOR_MS));
	expect((await runTimes()).filter((at) => at > pausedAt + 1000)).toEqual([]);

	const resumed = await runCli(['reindex', 'resume', id, '--json'], runner.env);
	const resumedAt = Date.now();
	const answer = JSON.parse(resumed.stdout) as { id: string; state: string; next_run_at: string };
	expect(answer).toMatchObject({ id, state: 'active', paused_at: null });
	expect(Date.parse(answer.next_run_at)).toBeGreaterThan(pausedAt);
	expect(Date.parse(answer.next_run_at)).toBeLessThanOrEqual(resumedAt + 1000);
	await waitFor(
		'a run after the resume',
		async () => ((await runTimes()).some((at) => at > resumedAt) ? true : undefined),
		30_000,
		100,
	);
	const unscheduled = await runCli(['reindex', 'unschedule', id, '--json'], runner.env);
	expect(JSON.parse(unscheduled.stdout)).toEqual({ id, removed: true });
	const unknown = await runCli(['reindex', 'pause', 'snosuch'], runner.env);
	expect({ code: unknown.code, error: unknown.stderr.trim() }).toEqual({
		code: 1,
		error: expect.stringContaining('No reindex schedule with id snosuch'),
	});
});
