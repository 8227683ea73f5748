/**
 * The runner's advanced timings (leases, heartbeat, locks, stall watch, backoffs): settings a test can
 * shorten, whose defaults are the durations production always ran on, each refused outside its
 * bounds with a message naming the variable and the rule.
 */
import { backoffMs } from 'convo-contract';
import { ConfigError, loadConfig } from '../../runner/src/config';
import { jobBackoffStrategy, sendRetryDelay } from '../../runner/src/jobs';
import { callBackoff } from '../../runner/src/reindex/work';
import { SPAN_ROOM, roomOf } from '../../runner/src/sending/startGateMath';

const DEFAULTS = {
	RUNNER_IDEMPOTENCY_LEASE: 30_000,
	RUNNER_HEARTBEAT: 5000,
	RUNNER_REINDEX_LEASE: 30_000,
	RUNNER_JOB_LOCK: 15_000,
	RUNNER_REINDEX_JOB_LOCK: 10_000,
	RUNNER_FEEDER_STALL: 15_000,
	RUNNER_TRACKING_CLAIM_LEASE: 30_000,
	RUNNER_TRACKING_LOCK: 15_000,
	// A fixed 30 s before it was a setting; renewed while a pass runs, so a live pass never needed that much.
	RUNNER_FEEDER_LOCK: 5000,
	RUNNER_SEND_BACKOFF: 1000,
	RUNNER_REINDEX_BACKOFF: 500,
	RUNNER_RATE_ROOM: 40,
};

test('unset, each timing is the duration the runner always used', () => {
	expect(loadConfig({})).toMatchObject(DEFAULTS);
});

test("the start gate's room is the gate's default unset, and a share of a second as the scripts take it", () => {
	expect(roomOf(loadConfig({}))).toBe(SPAN_ROOM);
	expect(roomOf(loadConfig({ RUNNER_RATE_ROOM: '18ms' }))).toBe(0.018);
	expect(() => loadConfig({ RUNNER_RATE_ROOM: '5ms' })).toThrow('RUNNER_RATE_ROOM must be between 10ms and 200ms');
});

test('a timing takes a duration with its unit, in milliseconds once read', () => {
	expect(
		loadConfig({ RUNNER_IDEMPOTENCY_LEASE: '5s', RUNNER_HEARTBEAT: '500ms', RUNNER_FEEDER_STALL: '2m' }),
	).toMatchObject({ RUNNER_IDEMPOTENCY_LEASE: 5000, RUNNER_HEARTBEAT: 500, RUNNER_FEEDER_STALL: 120_000 });
});

test('a timing outside its bounds, or not a duration, is refused naming the variable and the rule', () => {
	expect(() => loadConfig({ RUNNER_IDEMPOTENCY_LEASE: '500ms' })).toThrow(
		new ConfigError("The runner's environment is not valid:\n  RUNNER_IDEMPOTENCY_LEASE must be between 1s and 60m"),
	);
	expect(() => loadConfig({ RUNNER_HEARTBEAT: '2m' })).toThrow('RUNNER_HEARTBEAT must be between 200ms and 1m');
	expect(() => loadConfig({ RUNNER_JOB_LOCK: '0' })).toThrow('RUNNER_JOB_LOCK must be between 2s and 10m');
	expect(() => loadConfig({ RUNNER_SEND_BACKOFF: '50ms' })).toThrow('RUNNER_SEND_BACKOFF must be between 100ms and 1m');
	expect(() => loadConfig({ RUNNER_REINDEX_BACKOFF: '2m' })).toThrow(
		'RUNNER_REINDEX_BACKOFF must be between 100ms and 1m',
	);
	expect(() => loadConfig({ RUNNER_REINDEX_LEASE: 'soon' })).toThrow(
		'RUNNER_REINDEX_LEASE must be a duration like 3600s, 60m, 1h or 500ms',
	);
});

test("the tracking claim lease must outlast a check's two calls, or a check still waiting would be claimed again", () => {
	expect(() => loadConfig({ RUNNER_TRACKING_CLAIM_LEASE: '20s' })).toThrow(
		'RUNNER_TRACKING_CLAIM_LEASE must be more than twice RUNNER_HTTP_DEADLINE plus 1s',
	);
	expect(() => loadConfig({ RUNNER_TRACKING_CLAIM_LEASE: '30s', RUNNER_HTTP_DEADLINE: '20s' })).toThrow(
		'RUNNER_TRACKING_CLAIM_LEASE must be more than twice RUNNER_HTTP_DEADLINE plus 1s',
	);
	expect(
		loadConfig({ RUNNER_TRACKING_CLAIM_LEASE: '8s', RUNNER_HTTP_DEADLINE: '3s' }).RUNNER_TRACKING_CLAIM_LEASE,
	).toBe(8000);
});

test('the send backoff starts at RUNNER_SEND_BACKOFF and doubles, each wait up to half shorter at random; a failed send job waits the same', () => {
	for (const [config, firstMs] of [
		[loadConfig({}), 1000],
		[loadConfig({ RUNNER_SEND_BACKOFF: '200ms' }), 200],
	] as const) {
		for (let tries = 1; tries <= 4; tries++) {
			const full = firstMs * 2 ** (tries - 1);
			for (let i = 0; i < 20; i++) {
				for (const wait of [sendRetryDelay(config, tries), jobBackoffStrategy(config)(tries, 'send')]) {
					expect(wait).toBeGreaterThanOrEqual(full / 2);
					expect(wait).toBeLessThanOrEqual(full);
				}
			}
		}
	}
	// The other backoffs a job names keep their own first steps.
	const short = loadConfig({ RUNNER_SEND_BACKOFF: '100ms' });
	expect(jobBackoffStrategy(short)(1, 'delivery')).toBe(1000);
	expect(jobBackoffStrategy(short)(1, 'commitWait')).toBe(2000);
});

test('a reindex call is tried again after RUNNER_REINDEX_BACKOFF, doubling up to 10 s', () => {
	expect(callBackoff(loadConfig({}))).toEqual({ firstMs: 500, maxMs: 10_000 });
	const short = callBackoff(loadConfig({ RUNNER_REINDEX_BACKOFF: '100ms' }));
	expect([1, 2, 3, 8].map((attempt) => backoffMs(short, attempt))).toEqual([100, 200, 400, 10_000]);
});
