// @serial: SIGKILLs a runner half-way through a reindex and checks what survives
/**
 * A reindex under faults: a runner SIGKILLed half-way is resumed by another and the collection
 * converges (a re-run then sends nothing); a file cut short and a URL that drops mid-body end the
 * run `failed`, saying why, and deactivate nothing; two runs of one collection never overlap;
 * 429, 5xx and timeouts are retried (an upsert is idempotent) and every item still lands once in
 * the sandbox's collection.
 */
import type { Redis } from 'ioredis';

import { createReindex } from '../../runner/src/core/reindex';
import { clearFaults, runCli, setFault, useRunnerUnderTest, waitFor } from './support';
import {
	activeIds,
	collectionOf,
	clearSandboxCounts,
	sandboxCounts,
	differing,
	feedText,
	freshCollection,
	products,
	range,
	serveFeed,
	settled,
	UPSERT,
	writeFeed,
} from './reindexSupport';

jest.setTimeout(180_000);

// The reindex jobs' lock shortened from its 10 s default through its setting: a killed runner's run
// is seen stalled and resumed within seconds, by the same mechanism. The calls' backoff starts at
// 250 ms instead of 500 ms: the same retries, sooner. The calls' deadline is 1 s, short enough for
// the timeout test, long enough that no answer of the loaded sandbox outlasts it elsewhere (at
// 400 ms, now and then one did, and its retry's `unchanged` broke a count of `created`).
const runner = useRunnerUnderTest({
	RUNNER_CONCURRENCY: '10',
	RUNNER_HTTP_DEADLINE: '1s',
	RUNNER_REINDEX_JOB_LOCK: '4s',
	RUNNER_REINDEX_BACKOFF: '250ms',
});
const worker = () => runner.spawnWorker();

beforeEach(async () => {
	await freshCollection(runner);
	await clearSandboxCounts(runner);
});

async function start(
	source: string,
	extra: { deactivateMissing?: boolean; rate?: number; format?: string } = {},
): Promise<string> {
	const answer = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source,
		idField: 'sku',
		rate: 1000,
		...extra,
	});
	if (answer.kind !== 'run') throw new Error('expected a run');
	return answer.status.id;
}

test('SIGKILL half-way: another runner resumes the run, the collection equals the feed, a re-run sends nothing', async () => {
	const first = worker();
	// 20 ms answers with 10 in flight: at most 500 upserts a second, so the kill after 1,000 lands
	// seconds before the 3,000th.
	await setFault(runner.sandbox, { endpoint: UPSERT, latencyMs: 20 });
	const items = products(range(0, 3000));
	const path = writeFeed(feedText(items, 'ndjson'), 'feed.ndjson');
	const id = await start(path);
	await waitFor('the first runner to take the run', async () => /reindex run started/.test(first.output()), 60_000, 20);
	// The other runner starts while the first works the run (as in production, where several run):
	// it takes the run only once the killed one's lock lapses.
	const second = worker();
	await waitFor('1000 upserts before the kill', async () => (await sandboxCounts(runner))(UPSERT) >= 1000, 60_000, 20);
	await first.kill('SIGKILL');
	expect((await sandboxCounts(runner))(UPSERT)).toBeLessThan(3000);
	await clearFaults(runner.sandbox);

	const resumed = await settled(runner.context, id, 120_000);
	expect(resumed.state).toBe('completed');
	expect(second.output()).toMatch(/reindex run resumed/);
	expect(
		Number(
			await (runner.context.redis as Redis).hget(runner.context.keys.reindex.run(collectionOf(runner), id), 'attempt'),
		),
	).toBe(2);
	// The resumed pass read the whole source again; what the first had recorded was skipped.
	expect(resumed.counts.read).toBe(3000);
	expect(resumed.counts.unchanged).toBeGreaterThanOrEqual(900);
	expect(resumed.counts.failed + resumed.counts.rejected).toBe(0);
	expect(await activeIds(runner)).toEqual([...items.map((item) => String(item.sku)), 'sku-1'].sort());
	expect(await differing(runner, items)).toEqual([]);

	await clearSandboxCounts(runner);
	const again = await settled(runner.context, await start(path, { deactivateMissing: true }));
	expect(again.counts).toMatchObject({ read: 3000, unchanged: 3000, created: 0, updated: 0, deactivated: 0 });
	expect((await sandboxCounts(runner))(UPSERT)).toBe(0);
});

describe('a source not read to its end deactivates nothing and says why', () => {
	const items = products(range(0, 400));
	const whole = feedText(items, 'ndjson');
	const cut = whole.slice(0, whole.indexOf('\n', whole.length / 2) + 20);

	beforeEach(async () => {
		worker();
		const first = await settled(runner.context, await start(writeFeed(whole, 'feed.ndjson')));
		expect(first.counts.created).toBe(400);
		await clearSandboxCounts(runner);
	});

	test('a file cut short inside a record', async () => {
		const run = await settled(runner.context, await start(writeFeed(cut, 'cut.ndjson'), { deactivateMissing: true }));
		expect(run.state).toBe('failed');
		expect(run.last_error).toMatch(
			/the source could not be read to its end: .*cut\.ndjson is cut short: it ends inside line 2\d\d/,
		);
		expect(run.deactivation).toMatch(/^skipped: the source was not read to its end/);
		expect(run.counts.deactivated).toBe(0);
		expect((await sandboxCounts(runner))(UPSERT)).toBe(0);
		expect(await activeIds(runner)).toHaveLength(401);
	});

	test('a URL that drops the connection mid-body', async () => {
		const served = await serveFeed(whole, 'ndjson', { dropAfterBytes: Math.floor(whole.length / 2) });
		try {
			const run = await settled(runner.context, await start(served.url, { deactivateMissing: true }));
			expect(run.state).toBe('failed');
			expect(run.last_error).toMatch(
				/the source could not be read to its end: reading http:\/\/127\.0\.0\.1:\d+\/feed\.ndjson failed/,
			);
			expect(run.deactivation).toMatch(/^skipped: the source was not read to its end/);
			expect(run.counts.read).toBeGreaterThan(100);
			expect(run.counts.read).toBeLessThan(400);
			expect((await sandboxCounts(runner))(UPSERT)).toBe(0);
			expect(await activeIds(runner)).toHaveLength(401);
		} finally {
			await served.close();
		}
	});
});

test('two runs of one collection never overlap: the second is refused with a clear message', async () => {
	worker();
	const text = feedText(products(range(0, 1200)), 'ndjson');
	const path = writeFeed(text, 'feed.ndjson');
	// The first run's feed stops after 600 of its 1,200 lines until the test lets it go on: the run
	// holds its collection, mid-way, for as long as a CLI process takes to start and ask on a
	// loaded machine (a run merely slowed down could end before the CLI's try).
	const held = await serveFeed(text, 'ndjson', { holdAfterBytes: lineEnd(text, 600) });
	try {
		const id = await start(held.url);
		const refusal = `collection ${collectionOf(runner)} is being synced by run ${id}: two runs of one collection never overlap`;
		await expect(start(path)).rejects.toThrow(refusal);
		// Its first chunk (500 lines) upserted: the run is at work, not merely created.
		await waitFor('the first chunk upserted', async () => (await sandboxCounts(runner))(UPSERT) >= 500, 60_000, 50);
		await expect(start(path)).rejects.toThrow(refusal);
		const cli = await runCli(
			['reindex', 'run', '--collection', collectionOf(runner), '--source', path, '--id-field', 'sku', '--json'],
			runner.env,
		);
		expect(cli.code).toBe(1);
		expect(JSON.parse(cli.stdout).error).toContain(`is being synced by run ${id}`);
		held.release();
		const first = await settled(runner.context, id);
		expect(first.state).toBe('completed');
		expect(first.counts).toMatchObject({ read: 1200, created: 1200, failed: 0 });
	} finally {
		await held.close();
	}
	// Once it ended, the collection is free again.
	expect((await settled(runner.context, await start(path))).state).toBe('completed');
});

/** The byte offset just after line `lines` of `text`. */
function lineEnd(text: string, lines: number): number {
	let at = 0;
	for (let i = 0; i < lines; i++) at = text.indexOf('\n', at) + 1;
	return Buffer.byteLength(text.slice(0, at));
}

test('429, 5xx and timeouts are retried: every item lands, none fails, the answers after a timeout show as mismatches', async () => {
	worker();
	const items = products(range(0, 150));
	// Retry-After: 0: the run holds its least (100 ms) at each 429, as often as with 1 s.
	await setFault(runner.sandbox, {
		endpoint: UPSERT,
		errorRate: 0.2,
		errorStatus: 503,
		rateLimit: { retryAfterSeconds: 0, rate: 0.05 },
	});
	const run = await settled(runner.context, await start(writeFeed(feedText(items, 'ndjson'), 'feed.ndjson')));
	expect(run.state).toBe('completed');
	expect(run.counts).toMatchObject({ created: 150, failed: 0 });
	expect((await sandboxCounts(runner))(UPSERT)).toBeGreaterThan(150);
	await clearFaults(runner.sandbox);
	expect(await differing(runner, items)).toEqual([]);

	// Answers slower than the runner's deadline (1 s): the upsert may have happened; it is sent again.
	await freshCollection(runner);
	await clearSandboxCounts(runner);
	await setFault(runner.sandbox, { endpoint: UPSERT, latencyMs: 1500 });
	const slow = await start(writeFeed(feedText(items.slice(0, 20), 'ndjson'), 'slow.ndjson'));
	await waitFor('the first timed-out upserts', async () => (await sandboxCounts(runner))(UPSERT) >= 20, 30_000, 50);
	await clearFaults(runner.sandbox);
	const timedOut = await settled(runner.context, slow);
	expect(timedOut.state).toBe('completed');
	expect(timedOut.counts.failed).toBe(0);
	// The service had acted on the timed-out request: the retry answered `updated`/`unchanged` where `created` was expected.
	expect(timedOut.mismatched).toBeGreaterThan(0);
	expect(timedOut.counts.created + timedOut.counts.updated + timedOut.counts.unchanged).toBe(20);
	expect(await differing(runner, items.slice(0, 20))).toEqual([]);
});
