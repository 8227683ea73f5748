/**
 * What the reindex tests share: feeds written in each format, a feed served over HTTP (whole,
 * dropped mid-body, or held mid-body until the test lets it go on), the collection as the SANDBOX
 * holds it (B2, and the stored items themselves, which prove a stored payload equals the feed's),
 * a fresh collection, and the calls the sandbox itself counted.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { reindexOverview, type ReindexOverview } from '../../runner/src/core/reindex';
import type { RunnerContext } from '../../runner/src/context';
import { scanKeys, waitFor, type RunnerUnderTest } from './support';

export const UPSERT = 'POST /api/external/v2/search/item';
export const LIST = 'GET /api/external/v2/search/items';

export type Item = Record<string, unknown>;

/** Products p<i>; `version` changes an item's title, so a changed item is a different version. */
export function products(indexes: number[], version: (i: number) => number = () => 1): Item[] {
	return indexes.map((i) => ({
		sku: `p${i}`,
		title: `Product ${i} v${version(i)}`,
		description: `About product ${i}`,
		price: Math.round(i * 137) / 100,
		specs: { weight_g: 100 + (i % 50), colors: ['red', 'blue'].slice(0, 1 + (i % 2)) },
	}));
}

/** CSV cells are text: the CSV flavour of a product (the runner sends what it read). */
export function csvProduct(item: Item): Item {
	return {
		sku: String(item.sku),
		title: String(item.title),
		description: String(item.description),
		price: String(item.price),
	};
}

export const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

export type FeedFormat = 'ndjson' | 'json' | 'csv';

export function feedText(items: Item[], format: FeedFormat): string {
	if (format === 'ndjson') return items.map((item) => JSON.stringify(item)).join('\n') + '\n';
	if (format === 'json') return `[\n${items.map((item) => JSON.stringify(item)).join(',\n')}\n]\n`;
	const columns = ['sku', 'title', 'description', 'price'];
	const cell = (value: unknown) =>
		/[",\n]/.test(String(value)) ? `"${String(value).replace(/"/g, '""')}"` : String(value);
	return (
		[columns.join(','), ...items.map((item) => columns.map((column) => cell(item[column])).join(','))].join('\n') + '\n'
	);
}

/**
 * Where this test process writes its feeds (each in a folder of its own): a runner whose control
 * API is handed these paths names it as RUNNER_SOURCE_DIR, the only directory the API may read.
 */
export const FEED_DIR = mkdtempSync(join(tmpdir(), 'convo-feeds-'));

export function writeFeed(text: string, name: string): string {
	const path = join(mkdtempSync(join(FEED_DIR, 'feed-')), name);
	writeFileSync(path, text);
	return path;
}

export interface Served {
	url: string;
	/** With `holdAfterBytes`: sends the rest of the body (to a reader waiting, or to every later one). */
	release(): void;
	close(): Promise<void>;
}

/**
 * Serves `text` at /feed.<ext>; with `dropAfterBytes` the connection is destroyed mid-body
 * (Content-Length promises all of it); with `holdAfterBytes` the body stops there until `release()`,
 * so a run reading it holds its collection for as long as the test needs, however loaded the machine.
 */
export async function serveFeed(
	text: string,
	ext: string,
	options: { dropAfterBytes?: number; holdAfterBytes?: number } = {},
): Promise<Served> {
	const body = Buffer.from(text);
	let release = () => undefined as void;
	const released = new Promise<void>((resolve) => (release = resolve));
	const server = createServer((request, response) => {
		response.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
		if (options.dropAfterBytes !== undefined)
			response.write(body.subarray(0, options.dropAfterBytes), () => setTimeout(() => request.socket.destroy(), 50));
		else if (options.holdAfterBytes !== undefined) {
			const at = options.holdAfterBytes;
			response.write(body.subarray(0, at), () => void released.then(() => response.end(body.subarray(at))));
		} else response.end(body);
	});
	return { ...(await listen(server, `/feed.${ext}`)), release };
}

async function listen(server: Server, path = ''): Promise<Omit<Served, 'release'>> {
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}${path}`,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** The calls the sandbox received per `METHOD path pattern` since its last reset (its own count, GET /__sandbox/requests). */
export async function sandboxCounts(runner: RunnerUnderTest): Promise<(key: string) => number> {
	const { counts } = (await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`)).json()) as {
		counts: Record<string, number>;
	};
	return (key) => counts[key] ?? 0;
}

export async function clearSandboxCounts(runner: RunnerUnderTest): Promise<void> {
	await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`, { method: 'DELETE' });
}

export function collectionOf(runner: RunnerUnderTest): string {
	return runner.sandbox.fixture.businesses[0].collections[0].id;
}

async function external(
	runner: RunnerUnderTest,
	method: string,
	path: string,
	body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
	const response = await fetch(`${runner.sandbox.externalUrl}${path}`, {
		method,
		headers: {
			'x-api-key': runner.business.apiKey,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** B2 at the sandbox: external_id -> is_active. */
export async function listed(runner: RunnerUnderTest): Promise<Map<string, boolean>> {
	const { body } = await external(runner, 'GET', `/search/items?collection_id=${collectionOf(runner)}`);
	return new Map(
		(body.items as Array<{ external_id: string; is_active: boolean }>).map((item) => [
			item.external_id,
			item.is_active,
		]),
	);
}

export const activeIds = async (runner: RunnerUnderTest) =>
	[...(await listed(runner))]
		.filter(([, active]) => active)
		.map(([id]) => id)
		.sort();

/**
 * Proves the sandbox stores exactly these payloads with this `active`, each with the embedding the
 * service derives from it (the collection's embedding fields): what an upsert of the same content
 * would find `unchanged`, read from the sandbox's store (GET /__sandbox/search-items), so the
 * proof sends no upsert and changes nothing it reads. Returns the ids whose stored item differs.
 */
export async function differing(runner: RunnerUnderTest, items: Item[], active = true): Promise<string[]> {
	const collection = runner.sandbox.fixture.businesses[0].collections[0];
	const response = await fetch(`${runner.sandbox.baseUrl}/__sandbox/search-items?collection_id=${collection.id}`);
	if (!response.ok) throw new Error(`the sandbox's search items: ${response.status} ${await response.text()}`);
	const stored = new Map(((await response.json()) as StoredItem[]).map((item) => [item.external_id, item] as const));
	return items
		.filter((item) => {
			const kept = stored.get(String(item.sku));
			const embedding = Object.fromEntries(
				collection.embedding_fields.filter((field) => item[field] !== undefined).map((field) => [field, item[field]]),
			);
			return (
				!kept ||
				kept.is_active !== active ||
				canonical(kept.payload) !== canonical(item) ||
				canonical(kept.embedding_json) !== canonical(embedding)
			);
		})
		.map((item) => String(item.sku));
}

/**
 * JSON with every object's keys in order: equal for equal JSON values whatever their key order, as
 * the service compares them. (node's isDeepStrictEqual also compares prototypes, which differ
 * between a parsed answer and an object of the test's own under jest.)
 */
function canonical(value: unknown): string {
	return JSON.stringify(value, (_key, inner: unknown) =>
		inner && typeof inner === 'object' && !Array.isArray(inner)
			? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
			: inner,
	);
}

/** An item as the sandbox stores it (GET /__sandbox/search-items). */
interface StoredItem {
	external_id: string;
	payload: Item;
	embedding_json: Item;
	is_active: boolean;
}

/** Both sides start empty: the sandbox is reset (its fixture item sku-1 returns), the runner forgets the collection (its runs stay). */
export async function freshCollection(runner: RunnerUnderTest): Promise<void> {
	await fetch(`${runner.sandbox.baseUrl}/__sandbox/reset`, { method: 'POST' });
	const { redis } = runner.context;
	// Each collection's group (runner/src/keys.ts): its items, embeddings and lease go.
	const keys = (await scanKeys(redis, runner.env.RUNNER_PREFIX as string)).filter((key) =>
		/:\{c[^}]+\}:(items|emb|lock)$/.test(key),
	);
	for (const key of keys) await redis.del(key);
}

/**
 * Waits until the run has ended, its final state written; by then its collection's lease is let go
 * (the runner releases it first), so a next run of the collection may start at once.
 */
export async function settled(context: RunnerContext, id: string, timeoutMs = 90_000): Promise<ReindexOverview> {
	return waitFor(
		`reindex run ${id} to settle`,
		async () => {
			const overview = await reindexOverview(context, id);
			if (!['completed', 'failed', 'skipped'].includes(overview.state)) return undefined;
			const holder = await context.redis.get(context.keys.reindex.lock(overview.collection));
			if (holder === id)
				throw new Error(`reindex run ${id} is ${overview.state} but still holds its collection's lease`);
			return overview;
		},
		timeoutMs,
		100,
	);
}
