/**
 * The key layout of #20 (runner/src/keys.ts) as an operator meets it: RUNNER_PREFIX is a plain name
 * (a {hash tag} would pin every key to one Cluster slot again, so it is refused, naming why), and a
 * runner started on a Redis that still holds keys of the layout before it says so at start.
 */
import { loadConfig } from '../../runner/src/config';
import { useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();

test('RUNNER_PREFIX with a {hash tag} is refused, naming the reason; a plain name is taken', () => {
	expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', RUNNER_PREFIX: '{convo}' })).toThrow(
		/RUNNER_PREFIX must be a plain name like convo .*without a \{hash tag\}/,
	);
	expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).RUNNER_PREFIX).toBe('convo');
	expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', RUNNER_PREFIX: 'acme-prod.1' }).RUNNER_PREFIX).toBe(
		'acme-prod.1',
	);
});

test('a worker warns at start when the Redis holds keys of an older runner (the old layout), and not otherwise', async () => {
	const started = async (extra: NodeJS.ProcessEnv) => {
		const worker = runner.spawnWorker(extra);
		await waitFor('the worker to start', async () => worker.output().includes('runner started'), 30_000);
		await worker.kill('SIGTERM');
		return worker.output();
	};
	const warning = 'keys of an older runner (one hash tag for every key)';
	expect(await started({})).not.toContain(warning);
	// What an old runner with the prefix {<prefix>} left: its campaign list.
	const old = `{${runner.env.RUNNER_PREFIX}}:campaigns`;
	await runner.context.redis.zadd(old, Date.now(), 'cold');
	try {
		expect(await started({})).toContain(warning);
	} finally {
		await runner.context.redis.del(old);
	}
});
