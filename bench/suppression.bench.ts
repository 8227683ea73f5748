/**
 * Benchmark 11 (#23): what the suppression list costs. A list of 1,000,000 phones is imported
 * through the runner's own import (core.importSuppressions: 1,000 phones per script on the list,
 * then one per sending number's copy) with one sending number registered, so the figures hold the
 * list and one number's copy. Figures:
 *
 *   Redis bytes per entry: of the list (entries, the listed and changed indexes, the version) and
 *   of one number's copy, by MEMORY USAGE of each key (every field sampled), and used_memory's growth
 *   the importing process's peak RSS (sampled every 200 ms); the import holds one batch of rows at a time
 *   the time of the import, and of a new number's first copy (repairCopy from nothing), which a
 *   number's first campaign pays once
 *
 * A send pays one HGET more in its claim; no timing of it is attempted here (the rate benchmarks
 * run with it).
 */
import { Redis } from 'ioredis';

import { loadConfig } from '../runner/src/config';
import { createLogger } from '../runner/src/log';
import { closeContext, openContext } from '../runner/src/runtime';
import { importSuppressions, repairCopy } from '../runner/src/audience/suppression';
import type { SourceRecord } from '../runner/src/source';
import { round, size, usedMemory, type BenchResult, type Figure } from './lib/common';

const FROM = '4930111111111';
const SECOND = '4930222222222';

async function* phones(count: number): AsyncGenerator<SourceRecord> {
	for (let i = 0; i < count; i++)
		yield {
			line: i + 2,
			ok: true,
			fields: { phone: `49171${String(i).padStart(8, '0')}`, reason: i % 10 === 0 ? 'complained in the shop' : '' },
		};
}

async function bytesOf(redis: Redis, keys: string[]): Promise<number> {
	let total = 0;
	for (const key of keys) total += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
	return total;
}

export async function benchSuppression(redisUrl: string): Promise<BenchResult> {
	const count = size(1_000_000, 20_000);
	const prefix = `benchsupp${Date.now().toString(36)}`;
	const context = await openContext(
		loadConfig({
			REDIS_URL: redisUrl,
			RUNNER_PREFIX: prefix,
			RUNNER_MAX_RECIPIENTS: String(count),
			RUNNER_MAX_SUPPRESSIONS: String(count),
			LOG_LEVEL: 'warn',
		}),
		createLogger('silent'),
		{ withService: false },
	);
	const redis = new Redis(redisUrl);
	const started = new Date();
	try {
		const { keys } = context;
		// FROM holds a copy (a campaign not finished would open it) that the import writes to; SECOND's opens empty.
		await redis.sadd(keys.numbers, FROM);
		await redis.sadd(keys.suppression.copies, FROM);
		await redis.mset(keys.suppression.copyVersion(FROM), '0', keys.suppression.copyVersion(SECOND), '0');
		const memoryBefore = await usedMemory(redis);
		let peakRss = process.memoryUsage().rss;
		const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 200);
		const importStart = performance.now();
		const imported = await importSuppressions(context, phones(count));
		const importSeconds = (performance.now() - importStart) / 1000;
		clearInterval(sampler);
		const memoryGrowth = (await usedMemory(redis)) - memoryBefore;
		const list = await bytesOf(redis, [
			keys.suppression.entries,
			keys.suppression.listed,
			keys.suppression.changed,
			keys.suppression.version,
		]);
		const copy = await bytesOf(redis, [keys.suppression.copy(FROM), keys.suppression.copyVersion(FROM)]);
		const copyStart = performance.now();
		const replayed = await repairCopy(context, SECOND);
		const copySeconds = (performance.now() - copyStart) / 1000;
		const figures: Figure[] = [
			{ figure: 'entries imported', value: imported.added },
			{ figure: 'Redis bytes per entry: the list (global group)', value: round(list / count), unit: 'B' },
			{ figure: "Redis bytes per entry: one number's copy", value: round(copy / count), unit: 'B' },
			{
				figure: `Redis used_memory growth for ${count.toLocaleString('en-US')} entries and one copy`,
				value: round(memoryGrowth / 1024 / 1024),
				unit: 'MB',
			},
			{ figure: "the importing process's peak RSS", value: round(peakRss / 1024 / 1024), unit: 'MB' },
			{ figure: 'import time', value: round(importSeconds, 1), unit: 's' },
			{
				figure: `a new number's first copy (${replayed.toLocaleString('en-US')} phones)`,
				value: round(copySeconds, 1),
				unit: 's',
			},
		];
		return {
			name: 'suppression',
			title: `Benchmark 11: a suppression list of ${count.toLocaleString('en-US')} phones (#23)`,
			quick: count < 1_000_000,
			startedAt: started.toISOString(),
			seconds: (Date.now() - started.getTime()) / 1000,
			figures,
			notes: [
				'Phones of 13 digits, one in ten with a reason of 22 characters, the others the default reason ("imported"); the list is a hash of entries (source|ms|reason) plus two sorted sets (by time for paging, by version for repairs), each number\'s copy a hash of phone -> the note a suppressed row gets.',
				"The importing process's peak RSS includes tsx and the benchmark itself, and V8 collects lazily: the import holds one batch of 1,000 rows at a time.",
				"Per send, the claim step reads the number's copy with one HGET (and the campaign's transactional field); per create, one HMGET of the list per 1,000 rows.",
			],
		};
	} finally {
		await redis.eval(
			`local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('UNLINK', k) n = n + 1 end return n`,
			0,
			`${prefix}:*`,
		);
		redis.disconnect();
		await closeContext(context);
	}
}
