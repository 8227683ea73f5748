/**
 * Runner processes make themselves known: each `start` and `worker` keeps a key of its own
 * in the global group, renewed every RUNNER_HEARTBEAT and expiring three beats after its last
 * one (so one slow beat does not drop a live process), so a process that dies (even SIGKILL) drops out by itself. A
 * client that follows a campaign can then say at once that nothing on this Redis and prefix will take it, and /readyz
 * and the console say how many processes are alive. Only facts safe to show are kept: no setting, no key.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

import type { RunnerContext } from './context';
import { version } from '../package.json';

export interface LiveRunner {
	id: string;
	role: 'start' | 'worker';
	pid: number;
	host: string;
	version: string;
	/** The queues its workers take jobs from (as BullMQ names them, without the prefix). */
	queues: string[];
	started_at: string;
	last_beat_at: string;
}

export interface Heartbeat {
	stop(): Promise<void>;
}

/**
 * Starts beating for this process: the first beat is written before this returns, so a process is
 * listed from the moment its workers take jobs. A failed beat (Redis away) is tried again at the
 * next one; the key simply lapses meanwhile, which is what it should say.
 */
export async function startHeartbeat(
	context: RunnerContext,
	role: LiveRunner['role'],
	queues: () => string[],
): Promise<Heartbeat> {
	const { redis, keys } = context;
	const id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
	const startedAt = new Date().toISOString();
	const beatMs = context.config.RUNNER_HEARTBEAT;
	const ttlMs = beatMs * 3;
	const beat = async () => {
		const now = Date.now();
		const facts: LiveRunner = {
			id,
			role,
			pid: process.pid,
			host: hostname(),
			version,
			queues: queues(),
			started_at: startedAt,
			last_beat_at: new Date(now).toISOString(),
		};
		// One group ({g}), so one MULTI: the key and its place in the index move together.
		await redis
			.multi()
			.set(keys.runner(id), JSON.stringify(facts), 'PX', ttlMs)
			.zadd(keys.runners, now + ttlMs, id)
			.zremrangebyscore(keys.runners, '-inf', now)
			.exec();
	};
	await beat();
	// While Redis is away a beat waits in the connection's queue: one at a time, not one per interval.
	let pending = false;
	const timer = setInterval(() => {
		if (pending) return;
		pending = true;
		void beat()
			.catch(() => undefined)
			.finally(() => (pending = false));
	}, beatMs);
	timer.unref();
	return {
		async stop() {
			clearInterval(timer);
			// A process that stops cleanly leaves at once rather than after its TTL; with Redis away
			// the stop does not wait for it (the key lapses by itself).
			let timeout: NodeJS.Timeout | undefined;
			const gone = redis
				.multi()
				.del(keys.runner(id))
				.zrem(keys.runners, id)
				.exec()
				.catch(() => undefined);
			await Promise.race([gone, new Promise((resolve) => (timeout = setTimeout(resolve, 1000)))]);
			clearTimeout(timeout);
		},
	};
}

/** The runner processes alive on this Redis under this prefix, oldest first. */
export async function liveRunners(context: RunnerContext): Promise<LiveRunner[]> {
	const { redis, keys } = context;
	const ids = await redis.zrangebyscore(keys.runners, Date.now(), '+inf');
	if (ids.length === 0) return [];
	// The key, not the index, is the truth: its TTL is what a SIGKILLed process leaves behind.
	const values = await redis.mget(ids.map((id) => keys.runner(id)));
	return values
		.filter((value): value is string => value !== null)
		.map((value) => JSON.parse(value) as LiveRunner)
		.sort((a, b) => a.started_at.localeCompare(b.started_at));
}
