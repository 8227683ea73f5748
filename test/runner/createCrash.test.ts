// @serial: SIGKILLs the API at each point of a create and checks what survives
/**
 * A create killed midway (#17 items 11 and 12), against real `convo-runner start` processes, their
 * Redis and the sandbox. The recipients come as a CSV upload the test streams itself, so it holds
 * the create at a real point of its work: before any row was written, with rows half written, at
 * the commit (Redis pauses writes, so the step that makes the campaign exist is held), and after
 * the answer. Each time the process is killed with SIGKILL; then a runner is started and what the
 * sandbox received and what Redis holds are counted: every accepted phone exactly once or not at
 * all, no campaign listed running for good, nothing a dead create wrote kept for good.
 * Then the Idempotency-Key of a create killed midway: a live create still answers 409 past the
 * lease, a dead one frees its key within the lease, and the retry sends each phone once.
 */
import { request as httpRequest } from 'node:http';

import {
	positionalTemplate,
	scanKeys,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	type SpawnedRunner,
} from './support';

jest.setTimeout(300_000);

const TOKEN = 'crash-token-0123456789abcdef';
/**
 * The runners' Idempotency-Key lease, shortened from its 30 s default through its setting: the
 * guarantees (renewed while alive, freed within it once dead) do not depend on its length.
 */
const IDEMPOTENCY_LEASE_MS = 5000;
// Uploads are held still on purpose here (past the lease), longer than the default idle-upload timeout.
const runner = useRunnerUnderTest(
	{
		RUNNER_TOKEN: TOKEN,
		RUNNER_CONCURRENCY: '20',
		RUNNER_UPLOAD_IDLE_TIMEOUT: '120s',
		RUNNER_IDEMPOTENCY_LEASE: `${IDEMPOTENCY_LEASE_MS}ms`,
	},
	{ ownRedis: true },
);

const phoneOf = (seed: number, i: number) => `4915${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
const phonesOf = (seed: number, count: number) => Array.from({ length: count }, (_, i) => phoneOf(seed, i));
const csvLines = (phones: string[]) => phones.map((phone, i) => `+${phone},Customer ${i},order ${i}\n`).join('');
const settings = () => ({
	template_id: positionalTemplate(runner.business).id,
	from: runner.business.phoneNumbers[0],
	rate: '500',
});

/** `convo-runner start` with its API; the process, to kill it. */
async function startRunner(): Promise<{ base: string; process: SpawnedRunner }> {
	const base = await startApi(runner);
	return { base, process: runner.processes[runner.processes.length - 1] };
}

interface Upload {
	write(text: string): void;
	end(text?: string): void;
	answer: Promise<{ status: number; json: Record<string, unknown> } | { error: string }>;
}

/** A CSV upload to POST /api/campaigns streamed by the test: the create reads rows as they come. */
function upload(base: string, key?: string): Upload {
	const url = new URL(`/api/campaigns?${new URLSearchParams(settings())}`, base);
	const outgoing = httpRequest(url, {
		method: 'POST',
		headers: {
			authorization: `Bearer ${TOKEN}`,
			'content-type': 'text/csv',
			...(key ? { 'idempotency-key': key } : {}),
		},
	});
	const answer = new Promise<Awaited<Upload['answer']>>((resolve) => {
		outgoing.on('response', (response) => {
			let text = '';
			response.on('data', (chunk) => (text += String(chunk)));
			response.on('end', () => resolve({ status: response.statusCode ?? 0, json: text ? JSON.parse(text) : {} }));
			response.on('error', (error) => resolve({ error: error.message }));
		});
		outgoing.on('error', (error) => resolve({ error: error.message }));
	});
	outgoing.write('phone,1,2\n');
	return { write: (text) => outgoing.write(text), end: (text) => outgoing.end(text), answer };
}

async function createJson(base: string, key: string, phones: string[]) {
	const response = await fetch(`${base}/api/campaigns`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': key },
		body: JSON.stringify({
			...settings(),
			rate: 500,
			recipients: phones.map((phone, i) => ({ phone, 1: `Customer ${i}`, 2: `order ${i}` })),
		}),
	});
	return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const prefix = () => String(runner.env.RUNNER_PREFIX);
const stagedKeys = async () =>
	(await scanKeys(runner.context.redis, prefix())).filter((key) => key.includes(':staging:'));
const ledgerKeys = async () =>
	(await scanKeys(runner.context.redis, prefix())).filter((key) => key.endsWith(':ledger'));
/** Rows written so far to ledger hashes (staged or not) that were not there `before`. */
async function rowsWrittenSince(before: string[]): Promise<number> {
	let rows = 0;
	for (const key of (await ledgerKeys()).filter((k) => !before.includes(k)))
		rows += await runner.context.redis.hlen(key);
	return rows;
}

async function sendsTo(phones: string[]): Promise<Map<string, number>> {
	const wanted = new Set(phones);
	const counts = new Map<string, number>();
	for (const message of await templateSends(runner.sandbox))
		if (wanted.has(message.to)) counts.set(message.to, (counts.get(message.to) ?? 0) + 1);
	return counts;
}

/** Every key under the prefix that holds a campaign's rows or record, for campaigns not listed, and without an expiry. */
async function keptForGood(listed: Set<string>): Promise<string[]> {
	const left: string[] = [];
	for (const key of await scanKeys(runner.context.redis, prefix())) {
		const match = /:campaign:([^:]+)(:|$)|:staging:/.exec(key);
		if (!match || (match[1] && listed.has(match[1]))) continue;
		if ((await runner.context.redis.pttl(key)) < 0) left.push(key);
	}
	return left;
}

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
