/**
 * A reindex keeps a search collection in sync with a feed and sends only what changed, through
 * each source format and an http URL. Counted in what the sandbox received (its own request counts),
 * and checked against the sandbox's own collection: after the second run its active
 * items are the feed's, each stored payload equals the feed's, and the vanished items keep theirs.
 */
import type { Redis } from 'ioredis';

import { createReindex } from '../../runner/src/core/reindex';
import { monitorCommands, useRunnerUnderTest } from './support';
import {
	activeIds,
	collectionOf,
	clearSandboxCounts,
	csvProduct,
	sandboxCounts,
	differing,
	feedText,
	freshCollection,
	LIST,
	listed,
	products,
	range,
	serveFeed,
	settled,
	UPSERT,
	writeFeed,
	type FeedFormat,
	type Item,
} from './reindexSupport';

jest.setTimeout(180_000);

const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '20' });

beforeAll(() => {
	runner.spawnWorker();
});
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
	await Promise.all(closers.splice(0).map((close) => close()));
});

/** The feed as a source: a file, or served over http by this test. */
async function sourceFor(items: Item[], format: FeedFormat, over: 'file' | 'url'): Promise<string> {
	const text = feedText(items, format);
	if (over === 'file') return writeFeed(text, `feed.${format}`);
	const served = await serveFeed(text, format);
	closers.push(served.close);
	return served.url;
}

async function run(source: string, format: FeedFormat) {
	const answer = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source,
		format,
		idField: 'sku',
		deactivateMissing: true,
		rate: 1000,
	});
	if (answer.kind !== 'run') throw new Error('expected a run');
	return settled(runner.context, answer.status.id);
}

describe.each([
	['ndjson', 'file', 5000],
	['csv', 'url', 3000],
	['json', 'file', 3000],
] as const)('%s feed from a %s, %i items', (format, over, size) => {
	test('first run creates every item; the second sends exactly the 60 changed or new items and deactivates the 20 gone', async () => {
		const shape = (items: Item[]) => (format === 'csv' ? items.map(csvProduct) : items);
		await freshCollection(runner);
		await clearSandboxCounts(runner);

		const first = shape(products(range(0, size)));
		const one = await run(await sourceFor(first, format, over), format);
		expect(one.state).toBe('completed');
		expect(one.counts).toEqual({
			read: size,
			unchanged: 0,
			created: size,
			updated: 0,
			deactivated: 0,
			rejected: 0,
			failed: 0,
		});
		expect((await sandboxCounts(runner))(UPSERT)).toBe(size);
		// The fixture's own item sku-1 was never sent by the runner: reported, left alone.
		expect(one.foreign).toBe(1);

		// 20 removed (0..19), 50 changed (20..69), 10 added (size..size+9).
		const second = shape(products(range(20, size + 10), (i) => (i < 70 ? 2 : 1)));
		await clearSandboxCounts(runner);
		const two = await run(await sourceFor(second, format, over), format);
		expect(two.state).toBe('completed');
		expect(two.counts).toEqual({
			read: size - 10,
			unchanged: size - 70,
			created: 10,
			updated: 50,
			deactivated: 20,
			rejected: 0,
			failed: 0,
		});
		expect(two.mismatched).toBe(0);
		expect((await sandboxCounts(runner))(UPSERT)).toBe(60 + 20);
		expect((await sandboxCounts(runner))(LIST)).toBe(1);
		expect(two.deactivation).toMatch(/^done: 20 deactivated; 1 active items/);

		// The sandbox's collection now equals the feed: active items, payloads; the vanished keep their payload, inactive.
		expect(await activeIds(runner)).toEqual([...second.map((item) => String(item.sku)), 'sku-1'].sort());
		const state = await listed(runner);
		expect(range(0, 20).map((i) => state.get(`p${i}`))).toEqual(Array(20).fill(false));
		expect(await differing(runner, second)).toEqual([]);
		expect(await differing(runner, first.slice(0, 20), false)).toEqual([]);
	});
});

test('an unchanged feed makes no upsert at all; --force sends every item and the service answers unchanged', async () => {
	await freshCollection(runner);
	const items = products(range(0, 300));
	const path = writeFeed(feedText(items, 'ndjson'), 'feed.ndjson');
	expect((await run(path, 'ndjson')).counts.created).toBe(300);
	await clearSandboxCounts(runner);
	const again = await run(path, 'ndjson');
	expect(again.counts).toMatchObject({ read: 300, unchanged: 300, created: 0, updated: 0 });
	expect((await sandboxCounts(runner))(UPSERT)).toBe(0);

	const answer = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source: path,
		idField: 'sku',
		force: true,
		rate: 1000,
	});
	if (answer.kind !== 'run') throw new Error('expected a run');
	const forced = await settled(runner.context, answer.status.id);
	expect(forced.counts).toMatchObject({ read: 300, unchanged: 300, created: 0, updated: 0 });
	expect((await sandboxCounts(runner))(UPSERT)).toBe(300);
	expect(forced.mismatched).toBe(0);
});

test('--embedding-json is sent with every item and kept for a later deactivation', async () => {
	await freshCollection(runner);
	const embedding = { text: 'title only', model: 'small' };
	const embeddingFile = writeFeed(JSON.stringify(embedding), 'embedding.json');
	const items = products(range(0, 30));
	const first = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source: writeFeed(feedText(items, 'ndjson'), 'a.ndjson'),
		idField: 'sku',
		embeddingJson: embeddingFile,
		rate: 1000,
	});
	if (first.kind !== 'run') throw new Error('expected a run');
	expect((await settled(runner.context, first.status.id)).counts.created).toBe(30);
	const second = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source: writeFeed(feedText(items.slice(1), 'ndjson'), 'b.ndjson'),
		idField: 'sku',
		embeddingJson: embeddingFile,
		deactivateMissing: true,
		rate: 1000,
	});
	if (second.kind !== 'run') throw new Error('expected a run');
	expect((await settled(runner.context, second.status.id)).counts).toMatchObject({ unchanged: 29, deactivated: 1 });
	// The deactivated item still holds its payload and the embedding it was sent with.
	const response = await fetch(`${runner.sandbox.externalUrl}/search/item`, {
		method: 'POST',
		headers: { 'x-api-key': runner.business.apiKey, 'content-type': 'application/json' },
		body: JSON.stringify({
			collection_id: collectionOf(runner),
			external_id: 'p0',
			item: items[0],
			embedding_json: embedding,
			active: false,
		}),
	});
	expect(await response.json()).toMatchObject({
		operation: 'unchanged',
		is_active: false,
		embedding_regenerated: false,
	});
});

test('a run lets go of its collection before it writes its final state: whoever sees it ended may start the next run at once', async () => {
	await freshCollection(runner);
	const path = writeFeed(feedText(products(range(0, 20)), 'ndjson'), 'order.ndjson');
	const collection = collectionOf(runner);
	const lease = runner.context.keys.reindex.lock(collection);
	const monitor = await monitorCommands(runner.context.redis as Redis);
	const seen: string[][] = [];
	monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
	try {
		const answer = await createReindex(runner.context, { collection, source: path, idField: 'sku', rate: 1000 });
		if (answer.kind !== 'run') throw new Error('expected a run');
		const id = answer.status.id;
		expect((await settled(runner.context, id)).state).toBe('completed');
		const runKey = runner.context.keys.reindex.run(collection, id);
		// The release: the last script call naming the lease and the run (take and renew come before
		// it); the final state: the one naming the run's record and 'completed'.
		const released = seen
			.map((args) => /^eval/i.test(args[0]) && args.includes(lease) && args.includes(id))
			.lastIndexOf(true);
		const finished = seen.findIndex(
			(args) => /^eval/i.test(args[0]) && args.includes(runKey) && args.includes('completed'),
		);
		expect(released).toBeGreaterThanOrEqual(0);
		expect(finished).toBeGreaterThanOrEqual(0);
		expect(released).toBeLessThan(finished);
	} finally {
		monitor.disconnect();
	}
});
