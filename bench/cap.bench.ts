/**
 * Benchmark 12 (#23): what the frequency cap keeps in Redis at 1,000,000 phones. The runner's own
 * Lua (lua/includes/cap.lua, capCount: what each claim runs) records sends for PHONES phones of one
 * number under the policy 1/24h,3/7d, once, then twice more (three times per phone: the most this
 * policy keeps); and a campaign that waits out the cap holds all its recipients in its waiting set.
 * Figures: Redis bytes per phone (used_memory before and after, so the keyspace's own overhead
 * and the keys' expiry entries are in them) and MEMORY USAGE of one phone's key, and the waiting
 * set's bytes per recipient; each times 1,000,000. The runner's processes hold none of it: a
 * claim reads one phone's key, the feeder a chunk of the waiting set, a dry run a batch's phones.
 */
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { parseCapPolicy } from '../runner/src/capRules';
import { encodeCapPolicy } from '../runner/src/audience/capPolicy';
import { keysFor } from '../runner/src/keys';
import { resolveIncludes } from '../runner/src/redisScripts';
import { round, size, usedMemory, type BenchResult } from './lib/common';

const POLICY = '1/24h,3/7d';
const FROM = '4930100200900';
const BATCH = 2000;

const COUNT_RANGE = resolveIncludes(join(__dirname, 'lua', 'capCountRange-4.lua'));

const phoneOf = (index: number) => `4917${String(index).padStart(8, '0')}`;

export async function benchCap(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const phones = size(1_000_000, 20_000);
	const redis = new Redis(redisUrl);
	const keys = keysFor(`benchcap${Date.now().toString(36)}`);
	const campaign = 'cbench';
	const recipients = keys.recipients(FROM, campaign);
	const meta = keys.campaign(FROM, campaign);
	redis.defineCommand('benchCapCount', { lua: COUNT_RANGE, numberOfKeys: 4 });
	const countRange = (first: number, end: number, at: number) =>
		(redis as unknown as Record<string, (...args: Array<string | number>) => Promise<unknown>>).benchCapCount(
			keys.capPolicy(FROM),
			keys.capSends(FROM),
			recipients,
			meta,
			first,
			end,
			at,
		);
	try {
		await redis.set(keys.capPolicy(FROM), encodeCapPolicy(parseCapPolicy(POLICY, 'policy')));
		await redis.hset(meta, 'state', 'running');
		// The snapshot rows the claim reads the phone from (schema.ts encodeRecipient's shape).
		for (let first = 0; first < phones; first += BATCH) {
			const rows: string[] = [];
			for (let i = first; i < Math.min(phones, first + BATCH); i++)
				rows.push(String(i), `[${i + 2},"${phoneOf(i)}",{"1":"Customer ${i}"}]`);
			await redis.hset(recipients, ...rows);
		}

		const base = await usedMemory(redis);
		const now = Date.now();
		for (let first = 0; first < phones; first += BATCH) await countRange(first, Math.min(phones, first + BATCH), now);
		const once = await usedMemory(redis);
		for (const later of [60_000, 120_000])
			for (let first = 0; first < phones; first += BATCH)
				await countRange(first, Math.min(phones, first + BATCH), now + later);
		const thrice = await usedMemory(redis);
		const keyOnce = Number(await redis.call('MEMORY', 'USAGE', keys.capSends(FROM, phoneOf(0)), 'SAMPLES', '0'));
		const ttlHours = (await redis.pttl(keys.capSends(FROM, phoneOf(0)))) / 3_600_000;

		// A campaign that waits: every recipient in its waiting set (index by when it is allowed).
		const waiting = keys.capWaiting(FROM, campaign);
		const beforeWaiting = await usedMemory(redis);
		for (let first = 0; first < phones; first += BATCH) {
			const members: Array<string | number> = [];
			for (let i = first; i < Math.min(phones, first + BATCH); i++) members.push(now + 86_400_000 + i, i);
			await redis.zadd(waiting, ...members);
		}
		const afterWaiting = await usedMemory(redis);

		const perPhoneOnce = (once - base) / phones;
		const perPhoneThrice = (thrice - base) / phones;
		const perWaiting = (afterWaiting - beforeWaiting) / phones;
		const atMillion = (bytes: number) => `${round((bytes * 1_000_000) / 1e6).toLocaleString('en-US')} MB`;
		return {
			name: 'cap',
			title: 'Benchmark 12: the frequency cap in Redis at 1,000,000 phones (#23)',
			quick: phones < 1_000_000,
			startedAt: new Date(started).toISOString(),
			seconds: (Date.now() - started) / 1000,
			figures: [
				{ figure: 'phones with cap state', value: phones },
				{ figure: 'Redis bytes per phone, one send', value: round(perPhoneOnce), unit: 'B' },
				{
					figure: 'Redis bytes per phone, three sends (the most 1/24h,3/7d keeps)',
					value: round(perPhoneThrice),
					unit: 'B',
				},
				{ figure: "MEMORY USAGE of one phone's key, one send", value: keyOnce, unit: 'B' },
				{
					figure: 'cap state at 1,000,000 phones, one send / three sends',
					value: `${atMillion(perPhoneOnce)} / ${atMillion(perPhoneThrice)}`,
				},
				{ figure: "a phone's key expires after", value: round(ttlHours, 1), unit: 'h (the longest window)' },
				{ figure: 'Redis bytes per recipient in a waiting set', value: round(perWaiting), unit: 'B' },
				{ figure: 'waiting set of a 1,000,000-recipient campaign that waits', value: atMillion(perWaiting) },
			],
			notes: [
				`${phones.toLocaleString('en-US')} phones of one number under ${POLICY}, recorded by the claim's own Lua (capCount) in ranges of ${BATCH}; bytes from used_memory before and after (the keyspace's entries and expiry entries included).`,
				"A phone's state is one string key of its last claim times (ms), at most the policy's largest count, expiring after the longest window: it is gone 7 days after the phone's last send.",
				'The runner processes hold none of it in memory: a claim reads one key, the feeder takes at most a chunk of a waiting set per tick, a dry run checks a batch of phones at a time.',
				'Measured on a machine shared with other work (2 cores, other sessions running tests): bytes do not depend on load, times would.',
			],
		};
	} finally {
		for await (const found of redis.scanStream({ match: `${keys.prefix}:*`, count: 1000 }))
			if ((found as string[]).length > 0) await redis.unlink(...(found as string[]));
		redis.disconnect();
	}
}
