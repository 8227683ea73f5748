/**
 * Memory of a reindex run over a large generated feed: peak RSS of the runner process that reads
 * it (target < 300 MB, flat in the feed's size) and the Redis bytes the runner keeps per item.
 * Not a test: prints the figures.
 *
 * For each size (default 100,000 then 1,000,000 rows) the runner's record of the collection is
 * first filled as a previous complete run leaves it (the runner's own encoding, one field per item),
 * because a first sync of a million items at the service's ~300 upserts/s takes about an hour. The
 * run then reads the whole NDJSON feed for real, hashes every row, looks each up in Redis, and
 * upserts the 1% changed and the 0.1% new rows to the sandbox at --rate 1000, with
 * --deactivate-missing. Peak RSS is the kernel's high-water mark (VmHWM) of that process.
 *
 *   npm run bench:reindex [-- --rows 1000000]
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { Redis } from 'ioredis';

import { startSandbox } from '../sandbox/src';
import { keysFor } from '../runner/src/keys';
import { startPrivateRedis } from '../runner/src/redis';
import { contentHash } from '../runner/src/reindex/hash';
import { encodeItemState } from '../runner/src/reindex/itemState';

const TARGET_RSS_MB = 300;
const PREFIX = '{bench}';
const RUNNER_BIN = resolve(__dirname, '../runner/bin/convo-runner.mjs');

function option(name: string): number | undefined {
	const index = process.argv.indexOf(`--${name}`);
	const value = index === -1 ? undefined : Number(process.argv[index + 1]);
	return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

const product = (i: number, version: number) => ({
	sku: `p${i}`,
	title: `Product ${i} v${version}`,
	description: `About product ${i}: a generated item of a benchmark feed`,
	price: Math.round(i * 137) / 100,
	specs: { weight_g: 100 + (i % 50), colors: ['red', 'blue'].slice(0, 1 + (i % 2)) },
});

/** Rows 0..rows-1 as a previous run sent them; the feed changes every 100th and adds rows/1000 new ones. */
async function writeFeed(path: string, rows: number): Promise<void> {
	const out = createWriteStream(path);
	for (let i = 0; i < rows + rows / 1000; i++) {
		if (!out.write(`${JSON.stringify(product(i, i % 100 === 0 ? 2 : 1))}\n`)) await once(out, 'drain');
	}
	out.end();
	await once(out, 'finish');
}

async function seedRunnerRecord(redis: Redis, itemsKey: string, rows: number): Promise<void> {
	for (let from = 0; from < rows; from += 1000) {
		const pipeline = redis.pipeline();
		for (let i = from; i < Math.min(rows, from + 1000); i++) {
			const item = product(i, 1);
			pipeline.hset(itemsKey, item.sku, encodeItemState({ hash: contentHash(item, undefined, true), active: true, embeddingKey: '', itemJson: JSON.stringify(item) }));
		}
		await pipeline.exec();
	}
}

const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function benchOne(rows: number, redisUrl: string): Promise<void> {
	const redis = new Redis(redisUrl);
	await redis.flushall();
	const sandbox = await startSandbox({ port: 0 });
	const business = sandbox.fixture.businesses[0];
	const collection = business.collections[0].id;
	const keys = keysFor(PREFIX);
	const dir = mkdtempSync(join(tmpdir(), 'convo-reindex-bench-'));
	const feed = join(dir, 'feed.ndjson');
	const env = {
		PATH: process.env.PATH,
		HOME: process.env.HOME,
		REDIS_URL: redisUrl,
		RUNNER_PREFIX: PREFIX,
		CONVO_EXTERNAL_URL: sandbox.externalUrl,
		CONVO_API_KEY: business.apiKey,
		RUNNER_CONCURRENCY: '20',
		LOG_LEVEL: 'warn',
	};
	try {
		let started = Date.now();
		await writeFeed(feed, rows);
		const usedBefore = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
		await seedRunnerRecord(redis, keys.reindex.items(collection), rows);
		const usedAfter = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
		const recordBytes = Number(await redis.memory('USAGE', keys.reindex.items(collection), 'SAMPLES', 0));
		console.log(`  ${rows} rows: feed written and the runner's record seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);

		const worker = spawn(process.execPath, [RUNNER_BIN, 'worker'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
		await new Promise((done) => setTimeout(done, 3000));
		started = Date.now();
		const run = spawn(process.execPath, [RUNNER_BIN, 'reindex', 'run', '--collection', collection, '--source', feed, '--id-field', 'sku', '--deactivate-missing', '--rate', '1000', '--wait', '--json'], {
			env,
			stdio: ['ignore', 'pipe', 'ignore'],
		});
		let stdout = '';
		run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		let seenPeak = 0;
		const sampler = setInterval(() => {
			void (async () => {
				const [seenKey] = await redis.keys(`${PREFIX}:reindex:*:seen:*`);
				if (seenKey) seenPeak = Math.max(seenPeak, Number(await redis.memory('USAGE', seenKey)));
			})().catch(() => undefined);
		}, 2000);
		await once(run, 'exit');
		clearInterval(sampler);
		const seconds = (Date.now() - started) / 1000;
		const peak = peakRssMb(worker.pid as number);
		worker.kill('SIGTERM');
		await once(worker, 'exit');
		const status = JSON.parse(stdout) as { state: string; counts: Record<string, number> };
		const upserts = (await (await fetch(`${sandbox.baseUrl}/__sandbox/requests`)).json()) as { counts: Record<string, number> };
		console.log(`  ${rows} rows: ${status.state} in ${seconds.toFixed(1)} s (${Math.round(status.counts.read / seconds)} rows/s); counts ${JSON.stringify(status.counts)}`);
		console.log(`    B1 calls at the sandbox: ${upserts.counts['POST /api/external/v2/search/item']}, B2 calls: ${upserts.counts['GET /api/external/v2/search/items']}`);
		console.log(`    peak RSS of the runner process: ${peak.toFixed(0)} MB (target < ${TARGET_RSS_MB} MB: ${peak < TARGET_RSS_MB ? 'met' : 'NOT met'})`);
		console.log(
			`    Redis per item: ${(recordBytes / rows).toFixed(0)} B (MEMORY USAGE of the record), ${((usedAfter - usedBefore) / rows).toFixed(0)} B (used_memory growth); ` +
				`during the run the ids seen take about ${(seenPeak / rows).toFixed(0)} B per row more (dropped at its end)`,
		);
	} finally {
		await sandbox.close();
		redis.disconnect();
		rmSync(dir, { recursive: true, force: true });
	}
}

async function main(): Promise<void> {
	const sizes = option('rows') ? [option('rows') as number] : [100_000, 1_000_000];
	const redis = await startPrivateRedis();
	console.log(`reindex bench (runner worker + sandbox + private redis on this machine):`);
	try {
		for (const rows of sizes) await benchOne(rows, redis.url);
	} finally {
		await redis.stop();
	}
}

main().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});
