/**
 * Where a campaign's and a reindex run's keys live (keys.ts): a campaign's in its sending number's
 * group, a run's in its collection's. A caller that names only the id (the API, the CLI, a send
 * job) finds the group in a global hash once; it never changes, so each process keeps the answer.
 *
 * Making a campaign exist spans two groups, so it takes three steps, each safe to die after:
 *
 *   1. register (global): its home and its number. Left alone by a create that dies, it names a
 *      campaign that does not exist, which every reader treats as absent.
 *   2. commit (the number's group, create.ts): the campaign, its rows, its running set, its event,
 *      its Idempotency-Key answer, and an entry in the number's `unlisted` set.
 *   3. list (global, then the number's group): the id into `campaigns`, then out of `unlisted`.
 *      A process that dies between 2 and 3 leaves the entry in `unlisted`; the feeder lists it on
 *      its next tick (listUnlisted). Both writes are idempotent, so doing it twice is harmless.
 */
import type { Keys } from './keys';
import type { RedisConnection } from './redis';

interface Where {
	redis: RedisConnection;
	keys: Keys;
}

/** Homes kept per process: enough for every campaign and run in flight; the oldest go first. */
const KEPT = 10_000;
const known = new WeakMap<RedisConnection, Map<string, string>>();

function cacheOf(redis: RedisConnection): Map<string, string> {
	let cache = known.get(redis);
	if (!cache) known.set(redis, (cache = new Map()));
	return cache;
}

function remember(redis: RedisConnection, kind: string, id: string, home: string): void {
	const cache = cacheOf(redis);
	if (cache.size >= KEPT) cache.delete(cache.keys().next().value as string);
	cache.set(`${kind}:${id}`, home);
}

async function homeOf(where: Where, kind: 'c' | 'r', hash: string, id: string): Promise<string | undefined> {
	const cached = cacheOf(where.redis).get(`${kind}:${id}`);
	if (cached !== undefined) return cached;
	// A miss is not kept: the id may be committed a moment later (a start job waiting for its create).
	const home = await where.redis.hget(hash, id);
	if (home === null) return undefined;
	remember(where.redis, kind, id, home);
	return home;
}

/** The sending number a campaign's keys live under; undefined for no such campaign. */
export function campaignNumber(where: Where, id: string): Promise<string | undefined> {
	return homeOf(where, 'c', where.keys.homes, id);
}

/** The collection a reindex run's keys live under; undefined for no such run. */
export function runCollection(where: Where, id: string): Promise<string | undefined> {
	return homeOf(where, 'r', where.keys.reindex.homes, id);
}

/** Step 1 of a campaign: its home and its number, before anything is written in the number's group. */
export async function registerCampaign(where: Where, id: string, from: string): Promise<void> {
	const { redis, keys } = where;
	await redis.multi().hset(keys.homes, id, from).sadd(keys.numbers, from).exec();
	remember(redis, 'c', id, from);
}

/** Step 3: the committed campaign into the list every client reads, then out of its number's `unlisted`. */
export async function listCampaign(where: Where, from: string, id: string, createdAt: number): Promise<void> {
	await where.redis.zadd(where.keys.campaigns, createdAt, id);
	await where.redis.zrem(where.keys.unlisted(from), id);
}

/** The feeder's repair of step 3: lists the campaigns of `from` whose creating process died after the commit. */
export async function listUnlisted(where: Where, from: string): Promise<number> {
	const { redis, keys } = where;
	const entries = await redis.zrange(keys.unlisted(from), 0, 99, 'WITHSCORES');
	for (let i = 0; i + 1 < entries.length; i += 2) await listCampaign(where, from, entries[i], Number(entries[i + 1]));
	return entries.length / 2;
}

/** A campaign gone for good (a draft never started): out of the lists, its home forgotten last. */
export async function forgetCampaign(where: Where, id: string): Promise<void> {
	const { redis, keys } = where;
	await redis.multi().zrem(keys.campaigns, id).zrem(keys.drafts, id).hdel(keys.homes, id).exec();
	cacheOf(redis).delete(`c:${id}`);
}

/** A run's home and its collection (what the dispatcher walks), before its hash is written. */
export async function registerRun(where: Where, id: string, collection: string): Promise<void> {
	const { redis, keys } = where;
	await redis.multi().hset(keys.reindex.homes, id, collection).sadd(keys.reindex.collections, collection).exec();
	remember(redis, 'r', id, collection);
}
