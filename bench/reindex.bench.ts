/**
 * Benchmark 4: reindex runs by real runner processes against the sandbox (a process of its own).
 *
 *   100,000 items   a first run upserts every item for real (--rate 1000, the most a run takes;
 *                   the service's account ceiling is about 300/s); a re-run of the feed with 1% of
 *                   the rows changed must make <= 1,100 calls and take <= 10% of the first run's time.
 *                   Both with --deactivate-missing (one B2 listing each). Time: the run's own
 *                   started_at to finished_at; calls: the sandbox's request counts.
 *   1,000,000 items the runner's record is first filled as a complete run leaves it (its own
 *                   encoding, one field per item), because a first sync of a million items takes
 *                   17 minutes at 1,000/s and about an hour at the service's 300/s; the run then reads
 *                   the whole feed, hashes and looks up every row, and upserts the 1% changed and the
 *                   0.1% new rows. Peak RSS of the worker <= 300 MB (VmHWM).
 *
 * Redis bytes per item: MEMORY USAGE of the collection's record, and used_memory's growth.
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { loadConfig } from '../runner/src/config';
import { keysFor } from '../runner/src/keys';
import { createLogger } from '../runner/src/log';
import { contentHash } from '../runner/src/reindex/contentHash';
import { encodeItemState } from '../runner/src/reindex/itemState';
import { getRun } from '../runner/src/reindex/store';
import { closeContext, openContext } from '../runner/src/runtime';
import {
	runCli,
	scanKeys,
	spawnRunner,
	startSandboxProcess,
	uniquePrefix,
	waitFor,
	type SpawnedRunner,
} from '../test/runner/support';
import type { RunningSandbox } from '../sandbox/src';
import { shippedBin } from './lib/stack';
import { peakRssMb, round, sampleMax, size, usedMemory, type BenchResult, type Figure } from './lib/common';

const RATE = 1000;
const TARGET_CALLS = 1_100;
const TARGET_TIME_SHARE = 0.1;
const TARGET_RSS_MB = 300;

const product = (i: number, version: number) => ({
	sku: `p${i}`,
	title: `Product ${i} v${version}`,
	description: `About product ${i}: a generated item of a benchmark feed`,
	price: Math.round(i * 137) / 100,
	specs: { weight_g: 100 + (i % 50), colors: ['red', 'blue'].slice(0, 1 + (i % 2)) },
});

/** Rows 0..rows-1, every 100th at version `changed` (1 = as first sent), then `added` new rows. */
async function writeFeed(path: string, rows: number, changed: number, added: number): Promise<void> {
	const out = createWriteStream(path);
	for (let i = 0; i < rows + added; i++) {
		if (!out.write(`${JSON.stringify(product(i, i % 100 === 0 ? changed : 1))}\n`)) await once(out, 'drain');
	}
	out.end();
	await once(out, 'finish');
}

/** The runner's record of `rows` items as a complete run of version 1 leaves it. */
async function seedRunnerRecord(redis: Redis, itemsKey: string, rows: number): Promise<void> {
	for (let from = 0; from < rows; from += 1000) {
		const pipeline = redis.pipeline();
		for (let i = from; i < Math.min(rows, from + 1000); i++) {
			const item = product(i, 1);
			pipeline.hset(
				itemsKey,
				item.sku,
				encodeItemState({
					hash: contentHash(item, undefined, true),
					active: true,
					embeddingKey: '',
					itemJson: JSON.stringify(item),
				}),
			);
		}
		await pipeline.exec();
	}
}

async function requestCounts(sandbox: RunningSandbox): Promise<Record<string, number>> {
	return ((await (await fetch(`${sandbox.baseUrl}/__sandbox/requests`)).json()) as { counts: Record<string, number> })
		.counts;
}

async function resetRequestCounts(sandbox: RunningSandbox): Promise<void> {
	await fetch(`${sandbox.baseUrl}/__sandbox/requests`, { method: 'DELETE' });
}

interface RunFigures {
	state: string;
	seconds: number;
	/** From the run's start until every row was read (polled every 250 ms). */
	readingSeconds?: number;
	counts: Record<string, number>;
	calls: number;
	upserts: number;
	listings: number;
}

interface Setup {
	sandbox: RunningSandbox;
	redis: Redis;
	env: NodeJS.ProcessEnv;
	collection: string;
	itemsKey: string;
	prefix: string;
	dir: string;
	worker: SpawnedRunner;
}

async function setUp(redisUrl: string): Promise<Setup> {
	const sandbox = await startSandboxProcess();
	const business = sandbox.fixture.businesses[0];
	const prefix = uniquePrefix();
	const env: NodeJS.ProcessEnv = {
		PATH: process.env.PATH,
		HOME: process.env.HOME,
		REDIS_URL: redisUrl,
		RUNNER_PREFIX: prefix,
		CONVO_EXTERNAL_URL: sandbox.externalUrl,
		CONVO_API_KEY: business.apiKey,
		RUNNER_CONCURRENCY: '20',
		LOG_LEVEL: 'warn',
		// The feed is served on loopback by this bench: the operator's opt-in (README, Security).
		RUNNER_ALLOW_PRIVATE_URLS: 'true',
	};
	const collection = business.collections[0].id;
	return {
		sandbox,
		redis: new Redis(redisUrl),
		env,
		collection,
		itemsKey: keysFor(prefix).reindex.items(collection),
		prefix,
		dir: mkdtempSync(join(tmpdir(), 'convo-reindex-bench-')),
		// As the package ships it (its bin beside the built bundle, so the shebang's node flags apply), as benchmark 3 runs it.
		worker: spawnRunner(['worker'], env, [shippedBin()]),
	};
}

async function tearDown(setup: Setup): Promise<void> {
	await setup.worker.kill('SIGKILL');
	const keys = await scanKeys(setup.redis, setup.prefix);
	for (let i = 0; i < keys.length; i += 500) await setup.redis.unlink(...keys.slice(i, i + 500));
	setup.redis.disconnect();
	await setup.sandbox.close();
	rmSync(setup.dir, { recursive: true, force: true });
}

/**
 * One `reindex run --wait` to its end; time from the run's own record, calls from the sandbox's
 * counts. The run's record is polled meanwhile for when every row was read: the time after that is
 * the last upserts and the --deactivate-missing pass.
 */
async function reindexRun(setup: Setup, feed: string, rows: number): Promise<RunFigures> {
	await resetRequestCounts(setup.sandbox);
	const context = await openContext(loadConfig(setup.env), createLogger('silent'), { withService: false });
	const earlier = new Set(await context.redis.zrange(context.keys.reindex.runs, 0, -1));
	let readAllAt: number | undefined;
	const poll = setInterval(() => {
		void (async () => {
			const latest = (await context.redis.zrevrange(context.keys.reindex.runs, 0, 0)).find((id) => !earlier.has(id));
			if (latest && readAllAt === undefined && (await getRun(context, latest)).counts.read >= rows)
				readAllAt = Date.now();
		})().catch(() => undefined);
	}, 250);
	try {
		const args = [
			'reindex',
			'run',
			'--collection',
			setup.collection,
			'--source',
			feed,
			'--id-field',
			'sku',
			'--deactivate-missing',
			'--rate',
			String(RATE),
			'--wait',
			'--json',
		];
		const { code, stdout, stderr } = await runCli(args, setup.env, 30 * 60_000);
		clearInterval(poll);
		if (code !== 0) throw new Error(`reindex run exited with ${code}: ${(stdout + stderr).slice(-500)}`);
		const status = JSON.parse(stdout) as { id: string; state: string; counts: Record<string, number> };
		const run = await getRun(context, status.id);
		const counts = await requestCounts(setup.sandbox);
		const startedAt = run.startedAt ?? run.createdAt;
		return {
			state: status.state,
			seconds: ((run.finishedAt ?? 0) - startedAt) / 1000,
			readingSeconds: readAllAt === undefined ? undefined : (readAllAt - startedAt) / 1000,
			counts: status.counts,
			calls: Object.values(counts).reduce((sum, n) => sum + n, 0),
			upserts: counts['POST /api/external/v2/search/item'] ?? 0,
			listings: counts['GET /api/external/v2/search/items'] ?? 0,
		};
	} finally {
		clearInterval(poll);
		await closeContext(context);
	}
}

async function hundredThousand(
	redisUrl: string,
	rows: number,
): Promise<{ figures: Figure[]; details: Record<string, unknown> }> {
	const setup = await setUp(redisUrl);
	try {
		const first = join(setup.dir, 'first.ndjson');
		const second = join(setup.dir, 'second.ndjson');
		await writeFeed(first, rows, 1, 0);
		await writeFeed(second, rows, 2, 0);
		const before = await usedMemory(setup.redis);
		const full = await reindexRun(setup, first, rows);
		const recordBytes = Number(await setup.redis.memory('USAGE', setup.itemsKey, 'SAMPLES', 0));
		const grown = (await usedMemory(setup.redis)) - before;
		const again = await reindexRun(setup, second, rows);
		const peak = peakRssMb(setup.worker.child.pid);
		const rowsLabel = rows.toLocaleString('en-US');
		const changed = Math.ceil(rows / 100);
		const callTarget = Math.round((TARGET_CALLS * rows) / 100_000);
		return {
			figures: [
				{
					figure: `${rowsLabel} items, first run: ${full.state}, upserts at the sandbox`,
					value: full.upserts,
					target: `= ${rowsLabel}`,
					met: full.state === 'completed' && full.upserts === rows && full.counts.created === rows,
				},
				{
					figure: `${rowsLabel} items, first run: time (run's started_at to finished_at)`,
					value: round(full.seconds, 1),
					unit: 's',
				},
				{
					figure: `${rowsLabel} items, first run: upserts per second`,
					value: round(full.upserts / full.seconds),
					unit: '/s',
				},
				{
					figure: `re-run, ${changed.toLocaleString('en-US')} rows changed: ${again.state}, calls at the sandbox (B1 + B2)`,
					value: `${again.calls} (${again.upserts} + ${again.listings})`,
					target: `<= ${callTarget.toLocaleString('en-US')}`,
					met: again.state === 'completed' && again.calls <= callTarget && again.counts.updated === changed,
				},
				{ figure: 're-run: time', value: round(again.seconds, 1), unit: 's' },
				{
					figure: 're-run: reading every row / the rest (last upserts, B2 listing, deactivation check)',
					value:
						again.readingSeconds === undefined
							? 'not seen'
							: `${round(again.readingSeconds, 1)} s / ${round(again.seconds - again.readingSeconds, 1)} s`,
				},
				{
					figure: 're-run time / first run time',
					value: round(again.seconds / full.seconds, 3),
					target: `<= ${TARGET_TIME_SHARE}`,
					met: again.seconds / full.seconds <= TARGET_TIME_SHARE,
				},
				{
					figure: `${rowsLabel} items: runner worker peak RSS`,
					value: round(peak),
					unit: 'MB',
					target: `<= ${TARGET_RSS_MB} MB`,
					met: peak <= TARGET_RSS_MB,
				},
				{
					figure: `${rowsLabel} items: Redis bytes per item (MEMORY USAGE of the record / used_memory growth)`,
					value: `${round(recordBytes / rows)} / ${round(grown / rows)}`,
					unit: 'B',
				},
			],
			details: { rows, first: full, again, peakRssMb: peak, recordBytes, usedMemoryGrowth: grown },
		};
	} finally {
		await tearDown(setup);
	}
}

async function million(
	redisUrl: string,
	rows: number,
): Promise<{ figures: Figure[]; details: Record<string, unknown> }> {
	const setup = await setUp(redisUrl);
	try {
		const feed = join(setup.dir, 'feed.ndjson');
		const prepared = Date.now();
		await writeFeed(feed, rows, 2, rows / 1000);
		const before = await usedMemory(setup.redis);
		await seedRunnerRecord(setup.redis, setup.itemsKey, rows);
		const grown = (await usedMemory(setup.redis)) - before;
		const recordBytes = Number(await setup.redis.memory('USAGE', setup.itemsKey, 'SAMPLES', 0));
		const preparedSeconds = (Date.now() - prepared) / 1000;
		// The ids seen during the run: one more hash, dropped at the run's end.
		const seenPeak = sampleMax(async () => {
			const [seenKey] = (await scanKeys(setup.redis, setup.prefix)).filter((key) => key.includes(':seen:'));
			return seenKey ? Number(await setup.redis.memory('USAGE', seenKey)) : 0;
		}, 1000);
		await waitFor('the worker to start', async () => setup.worker.child.pid !== undefined, 10_000);
		const run = await reindexRun(setup, feed, rows + rows / 1000);
		const seen = await seenPeak.stop();
		const peak = peakRssMb(setup.worker.child.pid);
		const rowsLabel = rows.toLocaleString('en-US');
		return {
			figures: [
				{
					figure: `${rowsLabel} items (record seeded): ${run.state}, upserts (1% changed + 0.1% new)`,
					value: run.upserts,
					target: `= ${(rows / 100 + rows / 1000).toLocaleString('en-US')}`,
					met: run.state === 'completed' && run.upserts === rows / 100 + rows / 1000,
				},
				{
					figure: `${rowsLabel} items: time, rows read per second`,
					value: `${round(run.seconds, 1)} s, ${round(run.counts.read / run.seconds).toLocaleString('en-US')}/s`,
				},
				{
					figure: `${rowsLabel} items: runner worker peak RSS`,
					value: round(peak),
					unit: 'MB',
					target: `<= ${TARGET_RSS_MB} MB`,
					met: peak <= TARGET_RSS_MB,
				},
				{
					figure: `${rowsLabel} items: Redis bytes per item (MEMORY USAGE of the record / used_memory growth)`,
					value: `${round(recordBytes / rows)} / ${round(grown / rows)}`,
					unit: 'B',
				},
				{
					figure: `${rowsLabel} items: ids seen during the run, per row (dropped at its end)`,
					value: round(seen / rows),
					unit: 'B',
				},
			],
			details: {
				rows,
				run,
				peakRssMb: peak,
				recordBytes,
				usedMemoryGrowth: grown,
				seenPeakBytes: seen,
				preparedSeconds,
			},
		};
	} finally {
		await tearDown(setup);
	}
}

export async function benchReindex(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const small = await hundredThousand(redisUrl, size(100_000, 5_000));
	const large = await million(redisUrl, size(1_000_000, 50_000));
	return {
		name: 'reindex',
		title: 'Benchmark 4: reindex',
		quick: small.details.rows !== 100_000,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures: [...small.figures, ...large.figures],
		notes: [
			`Every run: one \`convo-runner worker\` (RUNNER_CONCURRENCY 20), \`reindex run --deactivate-missing --rate ${RATE} --wait\`, NDJSON feed of ~190-byte items.`,
			'The million-item run starts from a seeded record of the runner (a first sync of a million would take 17 minutes at 1,000/s).',
		],
		details: { hundredThousand: small.details, million: large.details },
	};
}
