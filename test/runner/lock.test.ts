/**
 * The lock helper (lock.ts over lua/lock/*.lua) on a real Redis: only the token that holds a lock
 * renews or releases it, and a take answers who holds it.
 */
import { releaseLock, renewLock, takeLock } from '../../runner/src/lock';
import { uniquePrefix, useRedisConnection } from './support';

const connection = useRedisConnection();

test('a take holds the lock for its token alone, for its lease; the holder may take it again', async () => {
	const key = `${uniquePrefix()}lock`;
	expect(await takeLock(connection.redis, key, 'a', 60_000)).toBeUndefined();
	expect(await connection.redis.get(key)).toBe('a');
	expect(await takeLock(connection.redis, key, 'b', 60_000)).toBe('a');
	expect(await connection.redis.get(key)).toBe('a');
	await connection.redis.pexpire(key, 1_000);
	expect(await takeLock(connection.redis, key, 'a', 60_000)).toBeUndefined();
	expect(await connection.redis.pttl(key)).toBeGreaterThan(30_000);
});

test('renew extends the lease only while the token holds the lock', async () => {
	const key = `${uniquePrefix()}lock`;
	expect(await renewLock(connection.redis, key, 'a', 60_000)).toBe(false);
	expect(await connection.redis.exists(key)).toBe(0);
	await takeLock(connection.redis, key, 'a', 1_000);
	expect(await renewLock(connection.redis, key, 'b', 60_000)).toBe(false);
	expect(await connection.redis.pttl(key)).toBeLessThanOrEqual(1_000);
	expect(await renewLock(connection.redis, key, 'a', 60_000)).toBe(true);
	expect(await connection.redis.pttl(key)).toBeGreaterThan(30_000);
});

test('release frees the lock only for its holder', async () => {
	const key = `${uniquePrefix()}lock`;
	await takeLock(connection.redis, key, 'a', 60_000);
	expect(await releaseLock(connection.redis, key, 'b')).toBe(false);
	expect(await connection.redis.get(key)).toBe('a');
	expect(await releaseLock(connection.redis, key, 'a')).toBe(true);
	expect(await connection.redis.exists(key)).toBe(0);
	expect(await takeLock(connection.redis, key, 'b', 60_000)).toBeUndefined();
});
