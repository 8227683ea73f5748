/**
 * Benchmark 13 (#36): what the daily messaging limit keeps in Redis at 1,000,000 recipients. The
 * runner's own script (lua/countCustomer-2.lua, what every send of a campaign calls under a
 * limit) counts PHONES distinct phones under a limit as large (the most the runner takes), in
 * pipelined batches; then every phone asks again (counted already, it draws nothing).
 * Figures: Redis bytes per recipient (used_memory before and after: the sorted set's entries,
 * its skiplist and its key) and MEMORY USAGE of the set; the calls per second of both passes. The
 * runner's processes hold none of it: a send asks about one phone, a dry run a batch of them.
 */
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { keysFor } from '../runner/src/keys';
import { resolveIncludes, SCRIPTS_DIR } from '../runner/src/redisScripts';
import { round, size, usedMemory, type BenchResult } from './lib/common';

const BATCH = 2000;
const SPAN_MS = 24 * 3_600_000 + 60_000;
const COUNT = resolveIncludes(join(SCRIPTS_DIR, 'countCustomer-2.lua'));

const phoneOf = (index: number) => `4917${String(index).padStart(8, '0')}`;

export async function benchBudget(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const phones = size(1_000_000, 20_000);
	const redis = new Redis(redisUrl);
	const keys = keysFor(`benchbudget${Date.now().toString(36)}`);
	redis.defineCommand('benchCountCustomer', { lua: COUNT, numberOfKeys: 2 });
	/** Every phone asks once, BATCH calls to a pipeline; answers counted by kind. */
	const pass = async () => {
		const answers = new Map<number, number>();
		const began = performance.now();
		for (let first = 0; first < phones; first += BATCH) {
			const batch = redis.pipeline() as unknown as Record<string, (...args: Array<string | number>) => unknown> & {
				exec(): Promise<Array<[Error | null, unknown]>>;
			};
			for (let i = first; i < Math.min(phones, first + BATCH); i++)
				batch.benchCountCustomer(keys.budget.limit, keys.budget.customers, phoneOf(i), '', SPAN_MS, 0);
			for (const [error, reply] of await batch.exec()) {
				if (error) throw error;
				const kind = Number((reply as number[])[0]);
				answers.set(kind, (answers.get(kind) ?? 0) + 1);
			}
		}
		return { answers, perSecond: phones / ((performance.now() - began) / 1000) };
	};
	try {
		await redis.set(keys.budget.limit, String(phones));
		const base = await usedMemory(redis);
		const counting = await pass();
		const after = await usedMemory(redis);
		const setBytes = Number(await redis.call('MEMORY', 'USAGE', keys.budget.customers, 'SAMPLES', '0'));
		const again = await pass();
		if (counting.answers.get(1) !== phones || again.answers.get(2) !== phones)
			throw new Error(
				`expected ${phones} customers counted then counted already, got ${JSON.stringify([...counting.answers])} then ${JSON.stringify([...again.answers])}`,
			);
		const perRecipient = (after - base) / phones;
		return {
			name: 'budget',
			title: 'Benchmark 13: the daily messaging limit in Redis at 1,000,000 recipients (#36)',
			quick: phones < 1_000_000,
			startedAt: new Date(started).toISOString(),
			seconds: (Date.now() - started) / 1000,
			figures: [
				{ figure: 'distinct recipients counted', value: phones },
				{ figure: 'Redis bytes per recipient', value: round(perRecipient), unit: 'B' },
				{
					figure: 'MEMORY USAGE of the set of counted customers, per recipient',
					value: round(setBytes / phones),
					unit: 'B',
				},
				{
					figure: 'the budget at 1,000,000 recipients',
					value: `${round((perRecipient * 1_000_000) / 1e6)} MB`,
				},
				{ figure: 'customers counted per second (pipelined, one client)', value: Math.round(counting.perSecond) },
				{ figure: 'customers asked again per second (already counted)', value: Math.round(again.perSecond) },
			],
			notes: [
				`${phones.toLocaleString('en-US')} distinct phones (12 digits) under a limit as large, each counted by the runner's own script in pipelined batches of ${BATCH}; bytes from used_memory before and after.`,
				'The budget is one sorted set (phone -> the time it was counted), trimmed by every call to the span (24 h and the margin) and bounded by the limit (at most 1,000,000): the channel tiers of 250 to 100,000 keep at most a tenth of these bytes. Unlimited keeps nothing.',
				'The runner processes hold none of it in memory: a send asks about one phone, a dry run a batch of phones at a time.',
				'Measured on a machine shared with other work (2 cores, other sessions running tests): bytes do not depend on load, calls per second would.',
			],
		};
	} finally {
		await redis.unlink(keys.budget.limit, keys.budget.customers);
		redis.disconnect();
	}
}
