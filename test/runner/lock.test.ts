/**
 * The lock helper (lock.ts over lua/lock/*.lua) on a real Redis: only the token that holds a lock
 * renews or releases it, a take answers who holds it, and a kept lock outlives its lease until
 * its keeper stops.
 */
import { keepLock, releaseLock, renewLock, takeLock } from '../../runner/src/lock';
import { uniquePrefix, useRedisConnection, waitFor } from './support';

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

test('keepLock holds a lock past its lease until stopped, then it lapses; a lock another took is said lost', async () => {
	const key = `${uniquePrefix()}lock`;
	const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
	const errors: Error[] = [];
	// A lease of 2 s renewed every 667 ms: a loaded machine's late timer does not make it lapse.
	await takeLock(connection.redis, key, 'a', 2_000);
	const stop = keepLock(connection.redis, key, 'a', 2_000, { error: (error) => errors.push(error) });
	// Past its lease: only the renewals can have kept it.
	await sleep(3_000);
	expect(await connection.redis.get(key)).toBe('a');
	stop();
	// Stopped, it lapses within its lease (waited for, not slept).
	await waitFor(
		'the stopped lock to lapse',
		async () => (await connection.redis.exists(key)) === 0 || undefined,
		2_500,
		50,
	);

	let lost = 0;
	await takeLock(connection.redis, key, 'b', 2_000);
	await connection.redis.set(key, 'c', 'PX', 60_000);
	const stopLost = keepLock(connection.redis, key, 'b', 2_000, {
		lost: () => lost++,
		error: (error) => errors.push(error),
	});
	await waitFor('the lock said lost', async () => lost > 0 || undefined, 10_000);
	stopLost();
	expect(lost).toBeGreaterThan(0);
	expect(await connection.redis.get(key)).toBe('c');
	expect(errors).toEqual([]);
});
