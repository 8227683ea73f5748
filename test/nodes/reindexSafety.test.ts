/**
 * Reindex Run → Start with Dry Run, Max Deactivate and Force Deactivate, through n8n-core against a
 * real `convo-runner start` (its own redis-server, the sandbox in a process of its own): what the
 * sandbox received and holds is counted, not the node's word.
 */
import type { IDataObject } from 'n8n-workflow';

import { createReindex } from '../../runner/src/core/reindex';
import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { startApi, useRunnerUnderTest, waitFor } from '../runner/support';
import {
	activeIds,
	clearSandboxCounts,
	collectionOf,
	FEED_DIR,
	feedText,
	freshCollection,
	products,
	range,
	sandboxCounts,
	settled,
	UPSERT,
	writeFeed,
} from '../runner/reindexSupport';

jest.setTimeout(240_000);

const TOKEN = 'node-guard-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_SOURCE_DIR: FEED_DIR });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

async function runNode(parameters: IDataObject) {
	const result = await runWorkflow(itemsThen([{}], convoNode(parameters)), {
		credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } },
	});
	const error = result.errorOf('Convo') as (Error & { description?: string }) | undefined;
	return { json: result.outputOf('Convo').map((item) => item.json), error };
}

const start = (source: string, additionalFields: IDataObject) => ({
	resource: 'reindexRun',
	operation: 'start',
	collectionId: { __rl: true, mode: 'id', value: collectionOf(runner) },
	source,
	format: 'ndjson',
	idField: 'sku',
	additionalFields: { deactivateMissing: true, rate: 1000, ...additionalFields },
});

async function getRun(id: string) {
	return waitFor(`run ${id} to end`, async () => {
		const got = await runNode({ resource: 'reindexRun', operation: 'get', runId: id });
		return ['completed', 'failed'].includes(String(got.json[0]?.state)) ? got.json[0] : undefined;
	});
}

test("Dry Run answers the counts and the guard's verdict, sending nothing; a run stops at Max Deactivate; Force Deactivate goes ahead", async () => {
	await freshCollection(runner);
	const seeded = await createReindex(runner.context, {
		collection: collectionOf(runner),
		source: writeFeed(feedText(products(range(0, 100)), 'ndjson'), 'seed.ndjson'),
		idField: 'sku',
		rate: 1000,
	});
	if (seeded.kind !== 'run') throw new Error('expected a run');
	await settled(runner.context, seeded.status.id);
	const source = writeFeed(feedText(products(range(0, 40)), 'ndjson'), 'short.ndjson');
	await clearSandboxCounts(runner);

	const dry = await runNode(start(source, { dryRun: true }));
	expect(dry.error).toBeUndefined();
	expect(dry.json[0]).toMatchObject({
		kind: 'dry_run',
		counts: { read: 40, created: 0, updated: 0, unchanged: 40, deactivated: 0, rejected: 0 },
		wipe_protection: { active_items: 101, would_deactivate: 60, verdict: 'would stop' },
	});
	expect((await sandboxCounts(runner))(UPSERT)).toBe(0);

	const stopped = await runNode(start(source, {}));
	expect(stopped.error).toBeUndefined();
	expect(await getRun(String(stopped.json[0].id))).toMatchObject({
		state: 'failed',
		last_error: expect.stringMatching(
			/^would deactivate 60 of 101 active items \(59\.4%\), more than the 10% allowed \(max_deactivate\); nothing was deactivated/,
		),
	});
	expect(await activeIds(runner)).toHaveLength(101);

	const atLimit = await runNode(start(source, { dryRun: true, maxDeactivate: '60%' }));
	expect(atLimit.json[0]).toMatchObject({ counts: { deactivated: 60 }, wipe_protection: { verdict: 'would pass' } });

	const forced = await runNode(start(source, { forceDeactivate: true }));
	expect(await getRun(String(forced.json[0].id))).toMatchObject({ state: 'completed', counts: { deactivated: 60 } });
	expect(await activeIds(runner)).toHaveLength(41);
	expect((await sandboxCounts(runner))(UPSERT)).toBe(60);
});

test('a bad Max Deactivate is named as the node shows it', async () => {
	const refused = await runNode(
		start(writeFeed(feedText(products(range(0, 3)), 'ndjson'), 'tiny.ndjson'), { maxDeactivate: 'most' }),
	);
	expect(refused.error?.message).toMatch(/Max Deactivate/);
	expect(refused.error?.message).toMatch(/must be a share of the collection's active items such as 10%/);
	expect(refused.error?.description).toBe('Correct Max Deactivate (runner API field: max_deactivate).');
});
