/**
 * The feeder's lock (sending/feeder.ts) against a real worker process and Redis: each pass takes it
 * for RUNNER_FEEDER_LOCK, not a fixed 30 s, so a process killed in the middle of a pass stops the
 * feeding of every number for that long at most (Redis lapses the lease; lock.test.ts shows a kept
 * lock outliving its lease until its keeper stops). A pass frees it when done.
 */
import { useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(60_000);

/** The feeder lock's lease, other than its 5 s default, so the lease seen is the setting's. */
const FEEDER_LOCK_MS = 2500;
const runner = useRunnerUnderTest({ RUNNER_FEEDER_LOCK: `${FEEDER_LOCK_MS}ms` });

test('each feeder pass holds its lock for RUNNER_FEEDER_LOCK at most, and frees it when done', async () => {
	const { redis, keys } = runner.context;
	const worker = runner.spawnWorker();
	// A pass lasts a few milliseconds here: its lock and lease are read in one round trip, often.
	const passes = new Map<string, number[]>();
	let freedBetween = 0;
	let last: string | null = null;
	await waitFor(
		'three feeder passes',
		async () => {
			const [[, holder], [, lease]] = (await redis.multi().get(keys.feederLock).pttl(keys.feederLock).exec()) as [
				[null, string | null],
				[null, number],
			];
			if (holder !== null) passes.set(holder, [...(passes.get(holder) ?? []), lease]);
			else if (last !== null) freedBetween++;
			last = holder;
			return passes.size >= 3 || undefined;
		},
		30_000,
		0,
	);
	const leases = [...passes.values()].flat();
	expect(Math.min(...leases)).toBeGreaterThan(0);
	expect(Math.max(...leases)).toBeLessThanOrEqual(FEEDER_LOCK_MS);
	expect(freedBetween).toBeGreaterThanOrEqual(2);
	await worker.kill('SIGKILL');
});
