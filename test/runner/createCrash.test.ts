/**
 * A create killed midway, against real `convo-runner start` processes, their Redis and the
 * sandbox. The recipients come as a CSV upload the test streams itself, so it holds the create at
 * a real point of its work: before any row was written, with rows half written, at the commit
 * (Redis pauses writes, so the step that makes the campaign exist is held), and after the answer.
 * Each time the process is killed with SIGKILL; then a runner is started and what the sandbox
 * received and what Redis holds are counted: every accepted phone exactly once or not at all, no
 * campaign listed running for good, nothing a dead create wrote kept for good. The Idempotency-Key
 * of a create killed midway is createLease.test.ts's.
 */
import { csvLines, createKit, phonesOf } from './createSupport';
import { useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(300_000);

const TOKEN = 'crash-token-0123456789abcdef';
// Redis pauses writes here (CLIENT PAUSE), so the file has a redis-server of its own.
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_CONCURRENCY: '20' }, { ownRedis: true });
const { startRunner, upload, stagedKeys, ledgerKeys, rowsWrittenSince, sendsTo, keptForGood } = createKit(
	runner,
	TOKEN,
);

test('SIGKILL at each point of a create: before any row, rows half written, at the commit, after the answer — each phone once or not at all, nothing running for good, nothing kept for good', async () => {
	const points = {
		beforeRows: phonesOf(1, 10),
		midRows: phonesOf(2, 2500),
		atCommit: phonesOf(3, 3000),
		afterAnswer: phonesOf(4, 3000),
	};

	// Before any row: the rows are read but fewer than one write batch, so nothing is written yet.
	let api = await startRunner();
	let pending = upload(api.base);
	pending.write(csvLines(points.beforeRows));
	await new Promise((resolve) => setTimeout(resolve, 500));
	await api.process.kill('SIGKILL');

	// Rows half written: two write batches are in Redis, the source is still being read.
	api = await startRunner();
	let before = await ledgerKeys();
	pending = upload(api.base);
	pending.write(csvLines(points.midRows));
	await waitFor('two batches of rows written', async () => (await rowsWrittenSince(before)) >= 2000, 30_000, 50);
	await api.process.kill('SIGKILL');

	// At the commit: every row is written, then Redis holds writes while the source ends, so the
	// create's next write waits in Redis when the process dies.
	api = await startRunner();
	before = await ledgerKeys();
	pending = upload(api.base);
	// Empty lines (skipped) push the last rows through the stream's buffers, so all 3,000 are written before the end.
	pending.write(`${csvLines(points.atCommit)}${'\n'.repeat(256 * 1024)}`);
	let written = 0;
	await waitFor('3,000 rows written', async () => (written = await rowsWrittenSince(before)) >= 3000, 10_000, 50).catch(
		(error) => {
			throw new Error(`${(error as Error).message}: ${written}`);
		},
	);
	await runner.context.redis.call('CLIENT', 'PAUSE', '20000', 'WRITE');
	try {
		pending.end();
		await new Promise((resolve) => setTimeout(resolve, 1500));
		await api.process.kill('SIGKILL');
	} finally {
		await runner.context.redis.call('CLIENT', 'UNPAUSE');
	}

	// After the answer: the campaign exists; the process dies before it sends much.
	api = await startRunner();
	pending = upload(api.base);
	pending.write(csvLines(points.afterAnswer));
	pending.end();
	const answered = await pending.answer;
	await api.process.kill('SIGKILL');
	expect(answered).toMatchObject({ status: 201, json: { state: 'running', accepted: 3000 } });

	// A runner started after the kills sends whatever exists; every listed campaign settles.
	api = await startRunner();
	const listed = await waitFor(
		'every listed campaign to settle',
		async () => {
			const response = await fetch(`${api.base}/api/campaigns?limit=500`, {
				headers: { authorization: `Bearer ${TOKEN}` },
			});
			const { items } = (await response.json()) as {
				items: Array<{ id: string; state: string; counts: Record<string, number> }>;
			};
			return items.every((item) => item.state === 'completed') ? items : undefined;
		},
		120_000,
		500,
	);
	const committedAt = listed.filter(
		(item) => Object.values(item.counts).reduce((sum, n) => sum + n, 0) === 3000,
	).length;
	// The campaign after the answer, and the one at the commit if its commit ran before the process died.
	expect([1, 2]).toContain(committedAt);
	expect(listed).toHaveLength(committedAt);

	const counts = await sendsTo(Object.values(points).flat());
	const sendsOf = (phones: string[]) => phones.map((phone) => counts.get(phone) ?? 0);
	expect(new Set(sendsOf(points.beforeRows))).toEqual(new Set([0]));
	expect(new Set(sendsOf(points.midRows))).toEqual(new Set([0]));
	expect(new Set(sendsOf(points.atCommit))).toEqual(new Set([committedAt === 2 ? 1 : 0]));
	expect(new Set(sendsOf(points.afterAnswer))).toEqual(new Set([1]));

	// What the dead creates wrote expires (staged rows), and no record of an unlisted campaign stays.
	expect(await keptForGood(new Set(listed.map((item) => item.id)))).toEqual([]);
	for (const key of await stagedKeys()) expect((await runner.context.redis.pttl(key)) / 60_000).toBeLessThanOrEqual(15);
	await api.process.kill('SIGKILL');
});
