/**
 * A reindex cannot wipe a collection, and a dry run says what a run would do writing nothing:
 * `convo-runner start` (API and worker) against real Redis and the sandbox, driven through the CLI
 * in processes of its own and the control API. Counted in what the sandbox received and holds
 * (its request counts, its B2 listing), the reindex.finished events a registered webhook got, and
 * a dump of the runner's Redis keys.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { RunnerEvent } from 'convo-contract';
import { createReindex, listReindexRuns, removeReindexSchedule } from '../../runner/src/core/reindex';
import type { RedisConnection } from '../../runner/src/redis';
import { runCli, scanKeys, startApi, useRunnerUnderTest, waitFor, waitForEventsDelivered } from './support';
import {
	activeIds,
	clearSandboxCounts,
	collectionOf,
	FEED_DIR,
	feedText,
	freshCollection,
	LIST,
	products,
	range,
	sandboxCounts,
	settled,
	UPSERT,
	writeFeed,
	type Item,
} from './reindexSupport';

jest.setTimeout(300_000);

const TOKEN = 'guard-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_SOURCE_DIR: FEED_DIR, RUNNER_CONCURRENCY: '20' });
let base = '';
const events: RunnerEvent[] = [];
let closeReceiver = async () => undefined as void;

beforeAll(async () => {
	base = await startApi(runner);
	const server = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', () => {
			events.push(JSON.parse(body) as RunnerEvent);
			response.writeHead(204).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	closeReceiver = () => new Promise((resolve) => server.close(() => resolve()));
	const hook = await call('POST', '/api/webhooks', {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
		events: ['reindex.finished'],
	});
	expect(hook.status).toBe(201);
});
afterAll(async () => {
	await closeReceiver();
});

async function call(method: string, path: string, body?: unknown) {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	return { status: response.status, json: (text ? JSON.parse(text) : undefined) as any };
}

const feed = (items: Item[]) => writeFeed(feedText(items, 'ndjson'), 'feed.ndjson');

/** A fresh collection holding p0..p<count-1> as the runner sent them (plus the sandbox's own sku-1). */
async function seed(count: number): Promise<void> {
	await freshCollection(runner);
	const answer = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source: feed(products(range(0, count))),
		idField: 'sku',
		rate: 1000,
	});
	if (answer.kind !== 'run') throw new Error('expected a run');
	expect((await settled(runner.context, answer.status.id)).counts.created).toBe(count);
	await clearSandboxCounts(runner);
}

/** `reindex run` in a process of its own, following the run to its end; its JSON answer. */
async function cliRun(source: string, ...flags: string[]) {
	const result = await runCli(
		[
			'reindex',
			'run',
			'--collection',
			collectionOf(runner),
			'--source',
			source,
			'--id-field',
			'sku',
			'--rate',
			'1000',
			'--json',
			...flags,
		],
		runner.env,
		120_000,
	);
	return { ...result, json: result.stdout ? JSON.parse(result.stdout) : undefined };
}

const finishedEvent = (id: string) =>
	waitFor(`reindex.finished of ${id}`, async () => events.find((event) => event.data.id === id), 60_000);

/**
 * Every key of the runner with its value, sorted, leaving out what live processes rewrite on
 * their own while idle: the control queue (the feeder's ticks), every queue's stalled-check stamp
 * (BullMQ's timer), each process's presence, the feeder's and dispatcher's locks, delivery
 * tracking's repeating tick (its queue, lock, clock and how far it looked for campaigns). The reindex and
 * events queues' jobs stay in: a run's job or an event would show.
 */
async function snapshot(redis: RedisConnection): Promise<string> {
	const prefix = runner.env.RUNNER_PREFIX as string;
	const keys = (await scanKeys(redis, prefix))
		.filter(
			(key) =>
				!/:(control|tracking)-\{g\}:|:stalled-check$|:runners?(:|$)|:lock:(feeder|outbox|tracking)$|:trk(seen|gate)$/.test(
					key,
				),
		)
		.sort();
	const parts: string[] = [];
	for (const key of keys) {
		const type = await redis.type(key);
		let value: unknown;
		if (type === 'string') value = await redis.get(key);
		else if (type === 'hash') value = Object.entries(await redis.hgetall(key)).sort();
		else if (type === 'list') value = await redis.lrange(key, 0, -1);
		else if (type === 'set') value = (await redis.smembers(key)).sort();
		else if (type === 'zset') value = await redis.zrange(key, 0, -1, 'WITHSCORES');
		else value = type;
		parts.push(`${key} ${JSON.stringify(value)}`);
	}
	return parts.join('\n');
}

describe('the wipe guard of --deactivate-missing', () => {
	test('a feed missing 60% of its items deactivates nothing: the run fails with the count, its event says why; --force-deactivate deactivates them', async () => {
		await seed(1000);
		// 400 stay, 10 of them changed: their upserts still happen.
		const kept = products(range(0, 400), (i) => (i < 10 ? 2 : 1));
		const source = feed(kept);

		const stopped = await cliRun(source, '--deactivate-missing', '--wait');
		expect(stopped.code).toBe(1);
		const message =
			'would deactivate 600 of 1,001 active items (59.9%), more than the 10% allowed (--max-deactivate); nothing was deactivated; run again with --force-deactivate if the feed is right, or give a higher --max-deactivate';
		expect(stopped.stderr).toContain(message);
		expect(stopped.json).toMatchObject({
			state: 'failed',
			last_error: message,
			counts: { read: 400, updated: 10, unchanged: 390, created: 0, deactivated: 0, rejected: 0, failed: 0 },
		});
		const counted = await sandboxCounts(runner);
		expect(counted(UPSERT)).toBe(10);
		expect(counted(LIST)).toBe(1);
		expect(await activeIds(runner)).toHaveLength(1001);
		const report = await runCli(['reindex', 'report', stopped.json.id, '--json'], runner.env);
		expect(JSON.parse(report.stdout)).toMatchObject({ state: 'failed', deactivation: `withheld: ${message}` });
		const event = await finishedEvent(stopped.json.id);
		expect(event).toMatchObject({
			type: 'reindex.finished',
			data: {
				id: stopped.json.id,
				state: 'failed',
				last_error: message,
				counts: expect.objectContaining({ deactivated: 0, updated: 10 }),
			},
		});

		await clearSandboxCounts(runner);
		const forced = await cliRun(source, '--deactivate-missing', '--force-deactivate', '--wait');
		expect(forced.code).toBe(0);
		expect(forced.json).toMatchObject({
			state: 'completed',
			counts: { read: 400, unchanged: 400, deactivated: 600, failed: 0 },
		});
		expect((await sandboxCounts(runner))(UPSERT)).toBe(600);
		expect(await activeIds(runner)).toEqual([...kept.map((item) => String(item.sku)), 'sku-1'].sort());
		expect(await finishedEvent(forced.json.id)).toMatchObject({ data: { state: 'completed', last_error: null } });
		// The ids kept between the count and the deactivation go with the attempt.
		expect(
			(await scanKeys(runner.context.redis, runner.env.RUNNER_PREFIX as string)).filter((key) =>
				/:missing:\d+$/.test(key),
			),
		).toEqual([]);
	});

	test('a feed missing 5% passes under the default; the limit as a count (CLI) and as a percent (API): more stops, the limit itself passes', async () => {
		await seed(200);
		const five = await cliRun(feed(products(range(10, 200))), '--deactivate-missing', '--wait');
		expect(five.code).toBe(0);
		expect(five.json).toMatchObject({ state: 'completed', counts: { deactivated: 10 } });
		expect(await activeIds(runner)).toHaveLength(191);

		// 10 more go: 10 of the 191 active (5.2%).
		const source = feed(products(range(20, 200)));
		const overCount = await cliRun(source, '--deactivate-missing', '--max-deactivate', '9', '--wait');
		expect(overCount.code).toBe(1);
		expect(overCount.json.last_error).toMatch(
			/^would deactivate 10 of 191 active items \(5\.2%\), more than the 9 allowed \(--max-deactivate\); nothing was deactivated/,
		);
		const overPercent = await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source,
			id_field: 'sku',
			deactivate_missing: true,
			max_deactivate: '5%',
			rate: 1000,
		});
		expect(overPercent.status).toBe(201);
		const percentRun = await settled(runner.context, overPercent.json.id);
		// Named as the API calls its fields.
		expect(percentRun).toMatchObject({
			state: 'failed',
			last_error: expect.stringMatching(
				/^would deactivate 10 of 191 active items \(5\.2%\), more than the 5% allowed \(max_deactivate\); .* run again with force_deactivate if the feed is right/,
			),
		});
		expect(await activeIds(runner)).toHaveLength(191);

		const atCount = await cliRun(source, '--deactivate-missing', '--max-deactivate', '10', '--wait');
		expect(atCount.json).toMatchObject({ state: 'completed', counts: { deactivated: 10 } });
		expect(await activeIds(runner)).toHaveLength(181);
		// 10 of 181 (5.5%) under 6%.
		const atPercent = await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source: feed(products(range(30, 200))),
			id_field: 'sku',
			deactivate_missing: true,
			max_deactivate: '6%',
			rate: 1000,
		});
		expect(await settled(runner.context, atPercent.json.id)).toMatchObject({
			state: 'completed',
			counts: { deactivated: 10 },
		});
		expect(await activeIds(runner)).toHaveLength(171);
	});

	test('a scheduled (cron) run honours the same limit', async () => {
		await seed(100);
		const answer = await createReindex(runner.context, {
			collection: collectionOf(runner),
			source: feed(products(range(0, 50))),
			idField: 'sku',
			deactivateMissing: true,
			cron: '*/2 * * * * *',
			tz: 'UTC',
		});
		if (answer.kind !== 'schedule') throw new Error('expected a schedule');
		try {
			const run = await waitFor(
				'a scheduled run to end',
				async () =>
					(await listReindexRuns(runner.context)).find(
						(listed) => listed.state === 'failed' && /would deactivate 50 of 101/.test(listed.last_error ?? ''),
					),
				60_000,
			);
			expect(run.last_error).toMatch(/more than the 10% allowed \(--max-deactivate\); nothing was deactivated/);
		} finally {
			await removeReindexSchedule(runner.context, answer.schedule.id);
		}
		await waitFor(
			'the scheduled runs to end',
			async () =>
				(await listReindexRuns(runner.context)).every((run) => ['completed', 'failed', 'skipped'].includes(run.state)),
			60_000,
		);
		expect(await activeIds(runner)).toHaveLength(101);
		expect((await sandboxCounts(runner))(UPSERT)).toBe(0);
	});

	test('bad limits are refused naming the flag or the field and the rule', async () => {
		const source = feed(products(range(0, 5)));
		const rule =
			"must be a share of the collection's active items such as 10% (0% to 100%), or a number of items such as 50 (a whole number, 0 or more)";
		for (const bad of ['110%', 'ten', '-5', '2.5', '']) {
			const cli = await cliRun(source, '--deactivate-missing', '--max-deactivate', bad);
			expect(cli.code).not.toBe(0);
			expect(cli.stdout + cli.stderr).toContain(`--max-deactivate ${rule}`);
		}
		for (const bad of ['110%', 'ten', -5, 2.5, true]) {
			const api = await call('POST', '/api/reindex', {
				collection_id: collectionOf(runner),
				source,
				id_field: 'sku',
				deactivate_missing: true,
				max_deactivate: bad,
			});
			expect(api.status).toBe(400);
			expect(api.json).toMatchObject({ field: 'max_deactivate', message: expect.stringMatching(/^max_deactivate /) });
		}
		const cron = await cliRun(source, '--dry-run', '--cron', '0 3 * * *');
		expect(cron.code).not.toBe(0);
		expect(cron.stdout + cron.stderr).toContain(
			'--dry-run cannot be combined with --cron: a dry run answers now and stores nothing',
		);
		const apiCron = await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source,
			id_field: 'sku',
			dry_run: true,
			cron: '0 3 * * *',
		});
		expect(apiCron.json).toMatchObject({
			status: 400,
			field: 'dry_run',
			message: 'dry_run cannot be combined with cron: a dry run answers now and stores nothing',
		});
	});
});

describe('dry runs write nothing and count what a run then does', () => {
	/** A dry run (CLI or API) and the proof it wrote nothing: the Redis dump, the sandbox's upserts, the events. */
	async function dryRun(
		via: 'cli' | 'api',
		source: string,
		extra: { deactivateMissing?: boolean; maxDeactivate?: string } = {},
	) {
		await waitForEventsDelivered(runner.context);
		const eventsBefore = events.length;
		const before = await snapshot(runner.context.redis);
		await clearSandboxCounts(runner);
		let answer;
		if (via === 'cli') {
			const flags = [
				...(extra.deactivateMissing ? ['--deactivate-missing'] : []),
				...(extra.maxDeactivate ? ['--max-deactivate', extra.maxDeactivate] : []),
			];
			const cli = await cliRun(source, '--dry-run', ...flags);
			expect(cli.code).toBe(0);
			answer = cli.json;
		} else {
			const api = await call('POST', '/api/reindex', {
				collection_id: collectionOf(runner),
				source,
				id_field: 'sku',
				dry_run: true,
				deactivate_missing: extra.deactivateMissing,
				max_deactivate: extra.maxDeactivate,
				rate: 1000,
			});
			expect(api.status).toBe(201);
			answer = api.json;
		}
		// A read of the collection (B2) when it counts what would be deactivated; never an upsert.
		expect((await sandboxCounts(runner))(UPSERT)).toBe(0);
		expect((await sandboxCounts(runner))(LIST)).toBe(answer.wipe_protection ? 1 : 0);
		expect(await snapshot(runner.context.redis)).toEqual(before);
		await waitForEventsDelivered(runner.context);
		expect(events).toHaveLength(eventsBefore);
		return answer;
	}

	async function realRun(source: string, extra: { deactivateMissing?: boolean; maxDeactivate?: string } = {}) {
		const answer = await createReindex(runner.context, {
			collection: collectionOf(runner),
			source,
			idField: 'sku',
			rate: 1000,
			...extra,
		});
		if (answer.kind !== 'run') throw new Error('expected a run');
		return settled(runner.context, answer.status.id);
	}

	const countsOf = (counts: Record<string, number>) => ({
		read: counts.read,
		created: counts.created,
		updated: counts.updated,
		unchanged: counts.unchanged,
		deactivated: counts.deactivated,
		rejected: counts.rejected,
	});

	test('CLI: 20 gone, 30 changed, 15 new: the dry run counts what the run then does, and says the guard would pass', async () => {
		await seed(300);
		const items = products(range(20, 315), (i) => (i < 50 ? 2 : 1));
		const source = feed(items);
		const dry = await dryRun('cli', source, { deactivateMissing: true });
		expect(dry).toMatchObject({
			kind: 'dry_run',
			counts: { read: 295, created: 15, updated: 30, unchanged: 250, deactivated: 20, rejected: 0 },
			rejected_rows: [],
			wipe_protection: { active_items: 301, would_deactivate: 20, verdict: 'would pass' },
		});
		const real = await realRun(source, { deactivateMissing: true });
		expect(real.state).toBe('completed');
		expect(countsOf(real.counts)).toEqual(dry.counts);
	});

	test('API: rejected rows are counted and listed with their lines, and deactivation is skipped, as the run then does', async () => {
		await seed(50);
		const good = products(range(0, 45), (i) => (i < 5 ? 3 : 1));
		const lines = [
			...good.slice(0, 10).map((item) => JSON.stringify(item)),
			'{"sku": broken',
			JSON.stringify({ title: 'no id' }),
			...good.slice(10).map((item) => JSON.stringify(item)),
			JSON.stringify(good[3]),
		];
		const source = writeFeed(`${lines.join('\n')}\n`, 'bad.ndjson');
		const dry = await dryRun('api', source, { deactivateMissing: true });
		// The dry run lists the collection only when it reads it all without a rejected row: here it does not.
		expect(dry).toMatchObject({
			kind: 'dry_run',
			counts: { read: 48, created: 0, updated: 5, unchanged: 40, deactivated: 0, rejected: 3 },
			rejected_rows: [
				{ line: 11, reason: expect.stringMatching(/^is not JSON/) },
				{ line: 12, reason: 'has no "sku" (the id_field)' },
				{ line: 48, reason: 'repeats the id of line 4' },
			],
			deactivation: expect.stringMatching(/^skipped: 3 source rows were rejected/),
			wipe_protection: null,
		});
		const real = await realRun(source, { deactivateMissing: true });
		expect(countsOf(real.counts)).toEqual(dry.counts);
	}, 300_000);

	test('a feed missing 60%: the dry run says the guard would stop, and the run then deactivates nothing', async () => {
		await seed(100);
		const source = feed(products(range(0, 40), (i) => (i < 4 ? 2 : 1)));
		const dry = await dryRun('api', source, { deactivateMissing: true });
		expect(dry).toMatchObject({
			counts: { read: 40, created: 0, updated: 4, unchanged: 36, deactivated: 0, rejected: 0 },
			wipe_protection: {
				active_items: 101,
				would_deactivate: 60,
				verdict: 'would stop',
				reason: expect.stringMatching(
					/^would deactivate 60 of 101 active items \(59\.4%\), more than the 10% allowed \(max_deactivate\)/,
				),
			},
			deactivation: expect.stringMatching(/^would be withheld/),
		});
		const passing = await dryRun('cli', source, { deactivateMissing: true, maxDeactivate: '60' });
		expect(passing).toMatchObject({ counts: { deactivated: 60 }, wipe_protection: { verdict: 'would pass' } });
		const real = await realRun(source, { deactivateMissing: true });
		expect(real.state).toBe('failed');
		expect(countsOf(real.counts)).toEqual(dry.counts);
		expect(await activeIds(runner)).toHaveLength(101);
	});
});
