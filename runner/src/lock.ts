/**
 * A lock in Redis: a key holding its holder's token for a lease of some milliseconds. Only the
 * token that holds it renews or releases it, so a holder whose lease ran out (and was taken by
 * another) cannot free or extend the new holder's.
 */
import type { RedisConnection } from './redis';
import { redisScript } from './redisScripts';

/** Takes the lock for `token`, also when `token` holds it already; answers the other holder instead. */
export async function takeLock(
	redis: RedisConnection,
	key: string,
	token: string,
	leaseMs: number,
): Promise<string | undefined> {
	const holder = String(await redisScript(redis, 'takeLock')([key], [token, leaseMs]));
	return holder === '' ? undefined : holder;
}

/** Starts the lease again from now; false when `token` no longer holds the lock. */
export async function renewLock(redis: RedisConnection, key: string, token: string, leaseMs: number): Promise<boolean> {
	return Number(await redisScript(redis, 'renewLock')([key], [token, leaseMs])) === 1;
}

/** Frees the lock if `token` still holds it. */
export async function releaseLock(redis: RedisConnection, key: string, token: string): Promise<boolean> {
	return Number(await redisScript(redis, 'releaseLock')([key], [token])) === 1;
}

/**
 * Renews `token`'s lease every third of it until the returned function is called: a live holder
 * keeps the lock however long its work takes, a dead one's lapses within `leaseMs`. `onLost`: the
 * lock went to another holder (its lease ran out first); `onError`: a renewal could not be asked.
 */
export function keepLock(
	redis: RedisConnection,
	key: string,
	token: string,
	leaseMs: number,
	on: { lost?: () => void; error: (error: Error) => void },
): () => void {
	const timer = setInterval(() => {
		renewLock(redis, key, token, leaseMs)
			.then((renewed) => {
				if (!renewed) on.lost?.();
			})
			.catch(on.error);
	}, leaseMs / 3);
	timer.unref();
	return () => clearInterval(timer);
}
