// @serial: measures how soon the Idempotency-Key of a killed create frees itself, in wall time
/**
 * The Idempotency-Key of a create killed midway, against real `convo-runner start` processes:
 * a live create still answers 409 past the lease (its work renews it), a dead one frees its key
 * within the lease, and the retry sends each phone once.
 */
import { createKit, csvLines, phonesOf } from './createSupport';
import { useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(300_000);

const TOKEN = 'lease-token-0123456789abcdef';
/**
 * The runners' Idempotency-Key lease, shortened from its 30 s default through its setting: the
 * guarantees (renewed while alive, freed within it once dead) do not depend on its length.
 */
const IDEMPOTENCY_LEASE_MS = 5000;
// Uploads are held still on purpose here (past the lease), longer than the default idle-upload timeout.
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_CONCURRENCY: '20',
	RUNNER_UPLOAD_IDLE_TIMEOUT: '120s',
	RUNNER_IDEMPOTENCY_LEASE: `${IDEMPOTENCY_LEASE_MS}ms`,
});
const { startRunner, upload, createJson, ledgerKeys, rowsWrittenSince, sendsTo } = createKit(runner, TOKEN);

test('an Idempotency-Key of a create killed midway frees itself within the lease; a live create keeps it; the retry sends each phone once', async () => {
	const phones = phonesOf(5, 1500);
	const key = 'n8n-crash-retry-key';
	let api = await startRunner();
	const before = await ledgerKeys();
	const first = upload(api.base, key);
	first.write(csvLines(phones.slice(0, 1200)));
	await waitFor('the first create to write rows', async () => (await rowsWrittenSince(before)) > 0, 30_000, 50);

	// Alive past its lease (the work renews it): the same key is still in progress.
	await new Promise((resolve) => setTimeout(resolve, IDEMPOTENCY_LEASE_MS + 3000));
	const whileAlive = await createJson(api.base, key, phones);
	expect(whileAlive.status).toBe(409);

	// The retrying runner is up before the kill, so the time measured is the lease's, not a start's.
	const next = await startRunner();
	await api.process.kill('SIGKILL');
	const killedAt = Date.now();
	api = next;
	const retried = await waitFor(
		'the retry with the same key to create',
		async () => {
			const answer = await createJson(api.base, key, phones);
			if (answer.status === 409) return undefined;
			return answer;
		},
		IDEMPOTENCY_LEASE_MS + 15_000,
		200,
	);
	const freedAfter = Date.now() - killedAt;
	expect(retried).toMatchObject({ status: 201, json: { state: 'running', accepted: 1500 } });
	// Kept until the lease last renewed (at most a third of it before the kill) ran out, then freed.
	expect(freedAfter).toBeGreaterThanOrEqual((IDEMPOTENCY_LEASE_MS * 2) / 3 - 500);
	expect(freedAfter).toBeLessThanOrEqual(IDEMPOTENCY_LEASE_MS + 3000);
	const replay = await createJson(api.base, key, phones);
	expect(replay).toMatchObject({ status: 200, json: { id: retried.json.id, replayed: true } });

	await waitFor(
		'the retried campaign to complete',
		async () => {
			const response = await fetch(`${api.base}/api/campaigns/${String(retried.json.id)}`, {
				headers: { authorization: `Bearer ${TOKEN}` },
			});
			return ((await response.json()) as { state: string }).state === 'completed';
		},
		60_000,
		500,
	);
	const counts = await sendsTo(phones);
	expect(counts.size).toBe(1500);
	expect(new Set(counts.values())).toEqual(new Set([1]));
	await api.process.kill('SIGKILL');
	console.log(`idempotency key freed ${freedAfter} ms after the kill (lease ${IDEMPOTENCY_LEASE_MS} ms)`);
});
