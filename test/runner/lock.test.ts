/**
 * The lock helper (lock.ts over lua/lock/*.lua) on a real Redis: only the token that holds a lock
 * renews or releases it, and a take answers who holds it.
 */
import { Redis } from 'ioredis';

import { releaseLock, renewLock, takeLock } from '../../runner/src/lock';
import { uniquePrefix, useRedisServer } from './support';

let server: Awaited<ReturnType<typeof useRedisServer>>;
let redis: Redis;

beforeAll(async () => {
	server = await useRedisServer();
	redis = new Redis(server.url);
});

afterAll(async () => {
	redis?.disconnect();
	await server?.stop();
});

test('a take holds the lock for its token alone, for its lease; the holder may take it again', async () => {
	const key = `${uniquePrefix()}lock`;
	expect(await takeLock(redis, key, 'a', 60_000)).toBeUndefined();
	expect(await redis.get(key)).toBe('a');
	expect(await takeLock(redis, key, 'b', 60_000)).toBe('a');
	expect(await redis.get(key)).toBe('a');
	await redis.pexpire(key, 1_000);
	expect(await takeLock(redis, key, 'a', 60_000)).toBeUndefined();
	expect(await redis.pttl(key)).toBeGreaterThan(30_000);
});

test('renew extends the lease only while the token holds the lock', async () => {
	const key = `${uniquePrefix()}lock`;
	expect(await renewLock(redis, key, 'a', 60_000)).toBe(false);
	expect(await redis.exists(key)).toBe(0);
	await takeLock(redis, key, 'a', 1_000);
	expect(await renewLock(redis, key, 'b', 60_000)).toBe(false);
	expect(await redis.pttl(key)).toBeLessThanOrEqual(1_000);
	expect(await renewLock(redis, key, 'a', 60_000)).toBe(true);
	expect(await redis.pttl(key)).toBeGreaterThan(30_000);
});

test('release frees the lock only for its holder', async () => {
	const key = `${uniquePrefix()}lock`;
	await takeLock(redis, key, 'a', 60_000);
	expect(await releaseLock(redis, key, 'b')).toBe(false);
	expect(await redis.get(key)).toBe('a');
	expect(await releaseLock(redis, key, 'a')).toBe(true);
	expect(await redis.exists(key)).toBe(0);
	expect(await takeLock(redis, key, 'b', 60_000)).toBeUndefined();
});
