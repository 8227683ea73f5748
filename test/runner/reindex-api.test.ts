/**
 * Reindex through the control API of a running `convo-runner start`: create (201), status and
 * report, 409 while the collection is being synced, 404 for an unknown run, 400 naming the field.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

import { clearFaults, setFault, startApi, useRunnerUnderTest, waitFor } from './support';
import { activeIds, collectionOf, FEED_DIR, feedText, products, range, UPSERT, writeFeed } from './reindexSupport';

jest.setTimeout(120_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_SOURCE_DIR: FEED_DIR });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

async function call(
	method: string,
	path: string,
	body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

test('POST /api/reindex runs it; GET status and report; a second run while it works is 409', async () => {
	await setFault(runner.sandbox, { endpoint: UPSERT, latencyMs: 20 });
	const items = products(range(0, 200));
	const body = {
		collection_id: collectionOf(runner),
		source: writeFeed(feedText(items, 'ndjson'), 'feed.ndjson'),
		id_field: 'sku',
		rate: 100,
		embedding_json: { text: 'title' },
	};
	const created = await call('POST', '/api/reindex', body);
	expect(created.status).toBe(201);
	expect(created.json).toMatchObject({ kind: 'run', state: 'queued' });
	const id = created.json.id as string;

	const overlap = await call('POST', '/api/reindex', body);
	expect(overlap.status).toBe(409);
	expect(overlap.json.message).toContain(`is being synced by run ${id}`);
	// An API caller is told how to follow the run in its own terms, never with a CLI command or flag.
	expect(overlap.json.message).toContain(`Wait for it (GET /api/reindex/${id})`);
	expect(overlap.json.message).not.toContain('--');
	await clearFaults(runner.sandbox);

	const done = await waitFor('the run to complete', async () => {
		const status = await call('GET', `/api/reindex/${id}`);
		return status.json.state === 'completed' ? status : undefined;
	});
	expect(Object.keys(done.json).sort()).toEqual(['counts', 'eta_seconds', 'id', 'last_error', 'rate', 'state']);
	expect(done.json.counts).toMatchObject({ read: 200, created: 200, failed: 0 });
	expect(await activeIds(runner)).toHaveLength(201);
	const report = await call('GET', `/api/reindex/${id}/report`);
	expect(report.json).toMatchObject({
		id,
		collection: collectionOf(runner),
		id_field: 'sku',
		rejected_rows: [],
		failures: [],
		deactivation: 'not asked: deactivate_missing was not given',
	});
	expect(((await call('GET', '/api/reindex')).json.runs as Array<{ id: string }>).map((run) => run.id)).toContain(id);

	// /metrics: the run's items by outcome, as the sandbox's own request log counts the upserts.
	const metrics = parsePrometheusTextFormat(
		await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text(),
	);
	const runItems =
		metrics
			.find((family) => family.name === 'convo_runner_reindex_items')
			?.metrics.filter((m) => m.labels?.run === id) ?? [];
	const createdItems = Number(runItems.find((m) => m.labels?.outcome === 'created')?.value);
	const requests = (await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`)).json()) as {
		counts: Record<string, number>;
	};
	expect(createdItems).toBe(200);
	expect(requests.counts[UPSERT]).toBe(createdItems);
	expect(runItems.find((m) => m.labels?.outcome === 'read')).toMatchObject({
		value: '200',
		labels: { collection: collectionOf(runner) },
	});
});

test('unknown run 404, bad input 400 naming the field, no token 401', async () => {
	expect(await call('GET', '/api/reindex/rnosuchrun')).toEqual({
		status: 404,
		json: expect.objectContaining({ message: 'No reindex run with id rnosuchrun' }),
	});
	const bad = await call('POST', '/api/reindex', {
		collection_id: 'nope',
		source: '/nonexistent.ndjson',
		id_field: 'sku',
	});
	expect(bad.status).toBe(400);
	expect(bad.json).toMatchObject({
		field: 'collection_id',
		message: 'collection_id must be the UUID of a search collection',
	});
	// The API's names, never the CLI's flags (--source, --id-field, --cron).
	const outside = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		source: '/nonexistent.ndjson',
		id_field: 'sku',
	});
	expect(outside.json).toMatchObject({ status: 400, field: 'source', message: expect.stringMatching(/^source /) });
	const noId = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		source: '/nonexistent.ndjson',
		id_field: '',
	});
	expect(noId.json).toMatchObject({ status: 400, field: 'id_field', message: expect.stringMatching(/^id_field /) });
	const lonelyTz = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		source: 'https://feeds.example/feed.ndjson',
		id_field: 'sku',
		tz: 'UTC',
	});
	expect(lonelyTz.json).toMatchObject({ status: 400, field: 'tz', message: 'tz goes with cron' });
	for (const answer of [bad, outside, noId, lonelyTz]) expect(answer.json.message).not.toMatch(/--/);
	expect((await fetch(`${base}/api/reindex`)).status).toBe(401);
	expect((await call('DELETE', '/api/reindex/schedules/snosuch')).status).toBe(404);
	for (const action of ['pause', 'resume'])
		expect((await call('POST', `/api/reindex/schedules/snosuch/${action}`)).json).toMatchObject({
			status: 404,
			message: 'No reindex schedule with id snosuch',
		});
});

test('a cron schedule paused and resumed through the API: answered and listed as paused with no next run, then active with one', async () => {
	const created = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		source: 'https://feeds.example/feed.ndjson',
		id_field: 'sku',
		cron: '0 0 1 1 *',
		tz: 'Europe/Berlin',
	});
	expect(created.status).toBe(201);
	const { id } = (created.json as { schedule: { id: string } }).schedule;
	const paused = await call('POST', `/api/reindex/schedules/${id}/pause`);
	// Its settings named as a run's report names them, times in ISO 8601; the feed's query never shown.
	expect(paused.json).toEqual({
		id,
		cron: '0 0 1 1 *',
		tz: 'Europe/Berlin',
		state: 'paused',
		next_run_at: null,
		collection: collectionOf(runner),
		source: 'https://feeds.example/feed.ndjson',
		origin: 'api',
		format: 'ndjson',
		id_field: 'sku',
		embedding: null,
		deactivate_missing: false,
		force: false,
		max_deactivate: '10%',
		force_deactivate: false,
		rate_limit: expect.any(Number),
		created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
		paused_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
	});
	const listed = (await call('GET', '/api/reindex')).json as { schedules: Array<{ id: string; state: string }> };
	expect(listed.schedules.find((schedule) => schedule.id === id)).toMatchObject({ state: 'paused' });
	const resumed = await call('POST', `/api/reindex/schedules/${id}/resume`);
	expect(resumed.json).toMatchObject({ id, state: 'active', paused_at: null });
	// Its next time is the pattern's next first of January, midnight in Berlin.
	expect((resumed.json as { next_run_at: string }).next_run_at).toMatch(/-12-31T23:00:00\.000Z$/);
	expect((await call('DELETE', `/api/reindex/schedules/${id}`)).status).toBe(200);
});
