/**
 * The trigger's event receipts have a total cap (RUNNER_MAX_RECEIPTS), over a real `convo-runner
 * start` and Redis: past it the oldest receipts are dropped for new ones, so Redis never holds
 * more than the cap however many events are recorded, recording never fails, and the newest
 * receipts still tell a repeat from a first delivery.
 */
import { apiCaller, scanKeys, startApi, useRunnerUnderTest } from './support';

jest.setTimeout(120_000);

const TOKEN = 'receipts-token-0123456789abcdef';
const MAX = 5;
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_MAX_RECEIPTS: String(MAX) });
let base = '';
beforeAll(async () => {
	base = await startApi(runner);
});
const call = apiCaller(() => base, TOKEN);

/** Receipts Redis holds under the runner's prefix: members of a set of them, or one per key. */
async function receiptsHeld(): Promise<number> {
	const { redis } = runner.context;
	let held = 0;
	for (const key of (await scanKeys(redis, runner.env.RUNNER_PREFIX as string)).filter((name) =>
		name.includes('receipt'),
	))
		held += (await redis.type(key)) === 'zset' ? await redis.zcard(key) : 1;
	return held;
}

test(`past ${MAX} receipts the oldest are dropped: Redis holds at most ${MAX}, every new event is first, the newest repeats are told apart`, async () => {
	const hooks: string[] = [];
	for (const i of [1, 2])
		hooks.push(
			(await call('POST', '/api/webhooks', { url: `http://127.0.0.1:9/hook-${i}`, events: ['campaign.finished'] })).json
				.id as string,
		);
	const events = Array.from({ length: 4 * MAX }, (_, i) => ({ hook: hooks[i % 2], event: `ev-cap-${i}` }));
	for (const { hook, event } of events) {
		const answer = await call('POST', `/api/webhooks/${hook}/receipts`, { event_id: event });
		expect({ event, status: answer.status, first: answer.json.first }).toEqual({ event, status: 200, first: true });
	}
	expect(await receiptsHeld()).toBe(MAX);
	for (const { hook, event } of events.slice(-MAX))
		expect((await call('POST', `/api/webhooks/${hook}/receipts`, { event_id: event })).json.first).toBe(false);
	expect(await receiptsHeld()).toBe(MAX);
	const log = runner.processes.map((process) => process.output()).join('\n');
	expect(
		log.split('\n').filter((line) => line.includes('webhook receipts at their cap (RUNNER_MAX_RECEIPTS)')),
	).toHaveLength(1);
});
