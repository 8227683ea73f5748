/**
 * The runner's small Redis scripts (runner/src/lua) called directly on a real Redis, no runner
 * process: the edge answers and the expiries their callers' end-to-end tests never reach (a
 * duration no test waits out is passed short here, or its TTL read right after the call). The
 * mutation check (docs/mutation-check.md) runs this file first for each of these scripts.
 */
import { redisScript } from '../../runner/src/redisScripts';
import { volleyCap } from '../../runner/src/sending/startGateMath';
import { startScriptArgs, uniquePrefix, useRedisConnection, type StartScriptCall } from './support';

const connection = useRedisConnection();
const run = (name: string, keys: string[], args: Array<string | number> = []) =>
	redisScript(connection.redis, name)(keys, args);

describe('reserveUnderLimit', () => {
	test('a member already in a full set asking again keeps its place; a new one gets the full count', async () => {
		const set = `${uniquePrefix()}set`;
		expect(await run('reserveUnderLimit', [set], [1, 'a', 1])).toBe(-1);
		expect(await run('reserveUnderLimit', [set], [1, 'a', 2])).toBe(-1);
		expect(await run('reserveUnderLimit', [set], [1, 'b', 3])).toBe(1);
		expect(await connection.redis.zrange(set, 0, -1)).toEqual(['a']);
	});
});

describe('recordReply', () => {
	test('a reply to a campaign that is gone records nothing', async () => {
		const prefix = uniquePrefix();
		expect(await run('recordReply', [`${prefix}meta`, `${prefix}replies`], [0, 1000])).toBe(0);
		expect(await connection.redis.exists(`${prefix}replies`)).toBe(0);
	});

	test("a recipient's first reply is kept and counted, a later one changes nothing", async () => {
		const prefix = uniquePrefix();
		const keys = [`${prefix}meta`, `${prefix}replies`];
		await connection.redis.hset(keys[0], 'state', 'running');
		expect(await run('recordReply', keys, [0, 1000])).toBe(1);
		expect(await run('recordReply', keys, [0, 2000])).toBe(0);
		expect(await run('recordReply', keys, [1, 3000])).toBe(1);
		expect(await connection.redis.hgetall(keys[1])).toEqual({ 0: '1000', 1: '3000', count: '2' });
	});

	test('the replies expire with their campaign', async () => {
		const prefix = uniquePrefix();
		await connection.redis.hset(`${prefix}meta`, 'state', 'running');
		await connection.redis.pexpire(`${prefix}meta`, 60_000);
		expect(await run('recordReply', [`${prefix}meta`, `${prefix}replies`], [0, 1000])).toBe(1);
		const ttl = await connection.redis.pttl(`${prefix}replies`);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(60_000);
	});
});

describe('a webhook failures count', () => {
	test('enabling a disabled webhook counts its failures from 0 again', async () => {
		const webhook = `${uniquePrefix()}webhook`;
		await connection.redis.hset(webhook, { failures: 7, disabled_at: 1000, disabled_reason: 'failing' });
		expect(await run('enableWebhook', [webhook])).toBe(1);
		expect(await connection.redis.hgetall(webhook)).toEqual({ failures: '0' });
		const removed = `${uniquePrefix()}webhook`;
		expect(await run('enableWebhook', [removed])).toBe(0);
		expect(await connection.redis.exists(removed)).toBe(0);
	});

	test('a delivered event counts the failures in a row from 0 again; a removed webhook is not recreated', async () => {
		const webhook = `${uniquePrefix()}webhook`;
		await connection.redis.hset(webhook, { url: 'http://x', failures: 3 });
		expect(await run('webhookSucceeded', [webhook])).toBe(1);
		expect(await connection.redis.hget(webhook, 'failures')).toBe('0');
		const removed = `${uniquePrefix()}webhook`;
		expect(await run('webhookSucceeded', [removed])).toBe(1);
		expect(await connection.redis.exists(removed)).toBe(0);
	});
});

describe('sign-in failures', () => {
	test('the period starts with the first failure and a later one does not extend it', async () => {
		const count = `${uniquePrefix()}failures`;
		expect(await run('countAuthFailure', [count], [60_000])).toBe(1);
		const ttl = await connection.redis.pttl(count);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(60_000);
		await connection.redis.pexpire(count, 5_000);
		expect(await run('countAuthFailure', [count], [60_000])).toBe(2);
		expect(await connection.redis.pttl(count)).toBeLessThanOrEqual(5_000);
	});

	test('a count under the limit makes no one wait', async () => {
		const count = `${uniquePrefix()}failures`;
		await connection.redis.set(count, 2, 'PX', 60_000);
		expect(await run('authWaitLeft', [count], [3])).toBe(0);
	});

	test('a count at the limit without an expiry makes no one wait', async () => {
		const count = `${uniquePrefix()}failures`;
		await connection.redis.set(count, 5);
		expect(await run('authWaitLeft', [count], [3])).toBe(0);
		await connection.redis.pexpire(count, 60_000);
		expect(await run('authWaitLeft', [count], [3])).toBeGreaterThan(0);
	});
});

describe('restartSpacing', () => {
	test('a clock ahead of now is brought back to now, and the time ahead is given back', async () => {
		const spacing = `${uniquePrefix()}spacing`;
		const aheadUs = (Date.now() + 60_000) * 1000;
		await connection.redis.hset(spacing, 'next', aheadUs);
		const givenBackUs = Number(await run('restartSpacing', [spacing]));
		expect(givenBackUs).toBeGreaterThan(50_000_000);
		expect(givenBackUs).toBeLessThanOrEqual(60_000_000);
		expect(Number(await connection.redis.hget(spacing, 'next'))).toBe(aheadUs - givenBackUs);
	});

	test('a clock with nothing ahead of now gives nothing back and stays as it was', async () => {
		const spacing = `${uniquePrefix()}spacing`;
		expect(await run('restartSpacing', [spacing])).toBe(0);
		expect(await connection.redis.exists(spacing)).toBe(0);
		await connection.redis.hset(spacing, 'next', 1000);
		expect(await run('restartSpacing', [spacing])).toBe(0);
		expect(await connection.redis.hget(spacing, 'next')).toBe('1000');
	});
});

describe("a campaign's blocked streak (settleBlocked-7.lua, reset by settle-8.lua's send)", () => {
	const THRESHOLD = 3;
	const campaign = async () => {
		const prefix = uniquePrefix();
		const [meta, ledger, running, outbox, ticks, rows, sends, daily] = [
			'meta',
			'ledger',
			'running',
			'outbox',
			'ticks',
			'rows',
			'sends',
			'daily',
		].map((name) => `${prefix}${name}`);
		await connection.redis.hset(meta, { state: 'running', n_c: 0 });
		await connection.redis.sadd(running, 'c1');
		/** A claim of recipient `index` made at `claimedAt`, held by token `t<index>`. */
		const claim = async (index: number, claimedAt: number) => {
			await connection.redis.hset(ledger, index, `c|1|${claimedAt}|${claimedAt}|t${index}|`);
			await connection.redis.hincrby(meta, 'n_c', 1);
		};
		const refused = (index: number, now: number, token = `t${index}`) =>
			run(
				'settleBlocked',
				[meta, ledger, running, outbox, ticks, rows, sends],
				[index, token, now, 'blocked', 'c1', THRESHOLD, 'template_refused', 'template paused'],
			);
		/** Settles a claim as sent (`s`), or back to pending (`p`: a 5xx, nothing sent). */
		const settled = (index: number, now: number, to: 's' | 'p' = 's') =>
			run(
				'settle',
				[meta, ledger, running, outbox, ticks, rows, sends, daily],
				[index, `t${index}`, to, now, to === 's' ? `m${index}` : '', to === 's' ? '' : 'a 503', 10, 'c1', ''],
			);
		const sent = (index: number, now: number) => settled(index, now);
		return { meta, outbox, running, claim, refused, sent, settled };
	};
	const events = async (outbox: string) =>
		(await connection.redis.lrange(outbox, 0, -1)).map((entry) => (JSON.parse(entry) as { type: string }).type);

	test('a send claimed before the refusals and answered after them does not break the streak', async () => {
		const { meta, outbox, running, claim, refused, sent } = await campaign();
		for (const index of [0, 1, 2, 3]) await claim(index, 1000 + index);
		expect(await refused(0, 2000)).toBe('ok');
		expect(await refused(1, 2100)).toBe('ok');
		expect(await sent(2, 2200)).toBe('ok');
		expect(await refused(3, 2300)).toBe('paused');
		expect(await connection.redis.hmget(meta, 'state', 'paused_reason')).toEqual(['paused', 'template_refused']);
		expect(await connection.redis.sismember(running, 'c1')).toBe(0);
		expect(await events(outbox)).toEqual(['campaign.paused']);
	});

	test("a resume's re-check ends with any answer but a refusal; back to pending, it stays open for the next start", async () => {
		const { meta, claim, settled } = await campaign();
		await connection.redis.hset(meta, 'recheck', String(Date.now() + 20_000));
		await claim(0, 1000);
		expect(await settled(0, 2000, 'p')).toBe('ok');
		// Any settle is progress (the feeder's stall sweep reads it), a send back to pending too.
		expect(await connection.redis.hmget(meta, 'recheck', 'last_progress_at')).toEqual(['1', '2000']);
		await claim(1, 3000);
		expect(await settled(1, 4000)).toBe('ok');
		expect(await connection.redis.hexists(meta, 'recheck')).toBe(0);
	});

	test("a resume's re-check refused pauses at once, the re-check over", async () => {
		const { meta, claim, refused } = await campaign();
		await connection.redis.hset(meta, 'recheck', '1');
		await claim(0, 1000);
		expect(await refused(0, 2000)).toBe('paused');
		expect(await connection.redis.hmget(meta, 'state', 'recheck')).toEqual(['paused', null]);
	});

	test("a refusal of a claim that is no longer this attempt's counts nothing", async () => {
		const { meta, claim, refused } = await campaign();
		await claim(0, 1000);
		expect(await refused(0, 2000, 'another')).toBe('lost');
		expect(await connection.redis.hmget(meta, 'blocked_streak', 'n_c')).toEqual([null, '1']);
	});

	test('refusals of sends in flight when the campaign stopped pause nothing again', async () => {
		const { meta, outbox, claim, refused } = await campaign();
		for (const index of [0, 1, 2]) await claim(index, 1000 + index);
		await connection.redis.hset(meta, 'state', 'paused', 'paused_reason', 'operator');
		for (const index of [0, 1, 2]) expect(await refused(index, 2000 + index)).toBe('ok');
		expect(await connection.redis.hmget(meta, 'state', 'paused_reason')).toEqual(['paused', 'operator']);
		expect(await connection.redis.llen(outbox)).toBe(0);
	});

	test('a send claimed after the last refusal was answered breaks the streak', async () => {
		const { meta, claim, refused, sent } = await campaign();
		for (const index of [0, 1]) await claim(index, 1000 + index);
		expect(await refused(0, 2000)).toBe('ok');
		expect(await refused(1, 2100)).toBe('ok');
		for (const index of [2, 3, 4, 5]) await claim(index, 2150 + index);
		expect(await sent(2, 2200)).toBe('ok');
		expect(await refused(3, 2300)).toBe('ok');
		expect(await refused(4, 2400)).toBe('ok');
		expect(await connection.redis.hmget(meta, 'state', 'blocked_streak')).toEqual(['running', '2']);
		expect(await refused(5, 2500)).toBe('paused');
	});
});

describe("the start gate's rate span step (start-11.lua taking a late start again)", () => {
	/**
	 * A wide rate span room (0.5: a 1.5 s span, and at rate 4 a cap of 2 in the last second) so the
	 * starts planted here sit hundreds of milliseconds from either bound, whatever the machine's load.
	 */
	const ROOM = 0.5;
	const gate = () => {
		const prefix = uniquePrefix();
		const keys = [
			'spacing',
			'log',
			'meta',
			'ledger',
			'running',
			'outbox',
			'rows',
			'suppressed',
			'policy',
			'sends',
			'waiting',
		];
		const [spacing, log] = keys.map((name) => `${prefix}${name}`);
		const startAgain = async (member: string) =>
			(await run(
				'start',
				keys.map((name) => `${prefix}${name}`),
				[ROOM, member, '0', '', '', 'c1', '', 'again', '', '', '', '', 0, 0],
			)) as Array<number | string>;
		return { spacing, log, startAgain };
	};
	const redisNowUs = async () => {
		const [seconds, micros] = await connection.redis.time();
		return Number(seconds) * 1_000_000 + Number(micros);
	};

	test('a start is logged; starts past the span and the second before it leave the log, which expires soon', async () => {
		const { spacing, log, startAgain } = gate();
		await connection.redis.hset(spacing, 'rate', 4);
		await connection.redis.zadd(log, 1, 'long-gone');
		expect((await startAgain('a'))[0]).toBe(0);
		expect(await connection.redis.zrange(log, 0, -1)).toEqual(['a']);
		const ttl = await connection.redis.pttl(log);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(2_000);
		expect(await connection.redis.hexists(spacing, 'logRenewedAt')).toBe(1);
		// Renewed just now: the next start leaves the log as it is.
		await connection.redis.zadd(log, 1, 'gone-since');
		expect((await startAgain('b'))[0]).toBe(0);
		expect(await connection.redis.zrange(log, 0, -1)).toEqual(['gone-since', 'a', 'b']);
	});

	test('a full rate span, or a full last second, makes the start wait', async () => {
		const { spacing, log, startAgain } = gate();
		await connection.redis.hset(spacing, 'rate', 4);
		// Four starts 1.2 s ago: out of the last second, inside the 1.5 s span.
		const spanAgo = (await redisNowUs()) - 1_200_000;
		await connection.redis.zadd(log, spanAgo, 's1', spanAgo, 's2', spanAgo, 's3', spanAgo, 's4');
		const [spanWait] = await startAgain('a');
		expect(spanWait).toBeGreaterThan(0);
		expect(spanWait).toBeLessThanOrEqual(300_000);
		expect(await connection.redis.zscore(log, 'a')).toBeNull();

		// Two starts half a second ago: room in the span, none in the last second (its cap is 2).
		await connection.redis.del(log);
		const secondAgo = (await redisNowUs()) - 500_000;
		await connection.redis.zadd(log, secondAgo, 's1', secondAgo, 's2');
		const [secondWait] = await startAgain('a');
		expect(secondWait).toBeGreaterThan(0);
		expect(secondWait).toBeLessThanOrEqual(500_000);
		expect(await connection.redis.zscore(log, 'a')).toBeNull();
	});

	test('a number without a rate is not held, and its starts are not logged', async () => {
		const { log, startAgain } = gate();
		expect((await startAgain('a'))[0]).toBe(0);
		expect(await connection.redis.exists(log)).toBe(0);
	});
});

describe('campaign events', () => {
	const outboxTypes = async (outbox: string) =>
		(await connection.redis.lrange(outbox, 0, -1)).map((text) => (JSON.parse(text) as { type: string }).type);

	test('a campaign born in a final state gets its event', async () => {
		const prefix = uniquePrefix();
		await connection.redis.hset(`${prefix}meta`, 'state', 'completed');
		expect(await run('emit', [`${prefix}meta`, `${prefix}outbox`], ['c1', 'campaign.finished', 1000])).toBe(1);
		const entries = (await connection.redis.lrange(`${prefix}outbox`, 0, -1)).map(
			(text) => JSON.parse(text) as { id: string; type: string },
		);
		expect(entries.map(({ id, type }) => ({ id, type }))).toEqual([{ id: 'ev-c1-1', type: 'campaign.finished' }]);
	});

	test('an ended campaign is reported finished once, and only when none of its recipients is open', async () => {
		const prefix = uniquePrefix();
		const keys = [`${prefix}finishing`, `${prefix}meta`, `${prefix}outbox`];
		await connection.redis.sadd(keys[0], 'c1');
		await connection.redis.hset(keys[1], { state: 'completed', n_p: 0, n_c: 1 });
		expect(await run('finished', keys, ['c1', 1000])).toBe(0);
		expect(await connection.redis.sismember(keys[0], 'c1')).toBe(1);
		expect(await outboxTypes(keys[2])).toEqual([]);

		await connection.redis.hset(keys[1], 'n_c', 0);
		expect(await run('finished', keys, ['c1', 1000])).toBe(1);
		expect(await run('finished', keys, ['c1', 1000])).toBe(0);
		expect(await connection.redis.sismember(keys[0], 'c1')).toBe(0);
		expect(await outboxTypes(keys[2])).toEqual(['campaign.finished']);
	});

	test('a campaign removed while it waited to finish reports nothing', async () => {
		const prefix = uniquePrefix();
		const keys = [`${prefix}finishing`, `${prefix}meta`, `${prefix}outbox`];
		await connection.redis.sadd(keys[0], 'c1');
		expect(await run('finished', keys, ['c1', 1000])).toBe(0);
		expect(await connection.redis.sismember(keys[0], 'c1')).toBe(0);
		expect(await connection.redis.exists(keys[1], keys[2])).toBe(0);
	});
});

describe('finishRun', () => {
	test('a reindex run is settled once: a run already final, or gone, is left as it is', async () => {
		const prefix = uniquePrefix();
		const [run1, outbox] = [`${prefix}run`, `${prefix}outbox`];
		await connection.redis.hset(run1, 'state', 'running');
		expect(await run('finishRun', [run1, outbox], ['r1', 1000, 'state', 'completed', 'indexed', 5])).toBe(1);
		expect(await run('finishRun', [run1, outbox], ['r1', 2000, 'state', 'failed', 'error', 'x'])).toBe(0);
		expect(await connection.redis.hgetall(run1)).toEqual({ state: 'completed', indexed: '5', events: '1' });
		for (const final of ['failed', 'skipped']) {
			const ended = `${uniquePrefix()}run`;
			await connection.redis.hset(ended, 'state', final);
			expect(await run('finishRun', [ended, outbox], ['r2', 3000, 'state', 'completed'])).toBe(0);
			expect(await connection.redis.hget(ended, 'state')).toBe(final);
		}
		const gone = `${uniquePrefix()}run`;
		expect(await run('finishRun', [gone, outbox], ['r3', 4000, 'state', 'completed'])).toBe(0);
		expect(await connection.redis.exists(gone)).toBe(0);
		const events = (await connection.redis.lrange(outbox, 0, -1)).map((text) => JSON.parse(text) as { id: string });
		expect(events.map(({ id }) => id)).toEqual(['ev-r1-1']);
	});
});

describe('takeWebhookSlot', () => {
	test('a slot past its time is dropped, and the set expires when its last slot lapses', async () => {
		const slots = `${uniquePrefix()}inflight`;
		const now = Date.now();
		await connection.redis.zadd(slots, now - 1, 'died-mid-delivery');
		expect(await run('takeWebhookSlot', [slots], ['job-1', now, now + 60_000, 1])).toBe(1);
		expect(await connection.redis.zrange(slots, 0, -1)).toEqual(['job-1']);
		const ttl = await connection.redis.pttl(slots);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(60_000);
		expect(await run('takeWebhookSlot', [slots], ['job-2', now, now + 60_000, 1])).toBe(0);
	});
});

describe('recordReceipt', () => {
	test('receipts past their time are dropped, and the set expires with the newest one', async () => {
		const receipts = `${uniquePrefix()}receipts`;
		await connection.redis.zadd(receipts, Date.now() - 120_000, 'w1:old');
		expect(await run('recordReceipt', [receipts], ['w1:new', 60_000, 10])).toBe(0);
		expect(await connection.redis.zrange(receipts, 0, -1)).toEqual(['w1:new']);
		const ttl = await connection.redis.pttl(receipts);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(60_000);
		expect(await run('recordReceipt', [receipts], ['w1:new', 60_000, 10])).toBe(-1);
	});
});

describe('sentTo', () => {
	test("a phone's recipient and its send time when its message was sent, its claim's time while in flight", async () => {
		const prefix = uniquePrefix();
		const keys = [`${prefix}phones`, `${prefix}ledger`];
		await connection.redis.hset(keys[0], {
			'4915550001': '2:0',
			'4915550002': '3:1',
			'4915550003': '4:2',
			'4915550004': '5:3',
			'4915550005': 'no index',
			'4915550006': '6:4',
			'4915550007': '7:5',
		});
		await connection.redis.hset(keys[1], {
			0: 's|1|0|1700000000000|',
			1: 'p|0|0||',
			2: 's|1|0||',
			4: 'c|1|1700000000400|1700000000500|token-1|',
			5: 'u|1|1700000000400|1700000000500|token-2|',
		});
		expect(await run('sentTo', keys, ['4915550001'])).toEqual(['0', '1700000000000']);
		expect(await run('sentTo', keys, ['4915550006'])).toEqual(['4', '1700000000500', 'claimed']);
		// Pending, sent without a time, no record, an entry without an index, no entry, unknown: nothing.
		for (const phone of ['4915550002', '4915550003', '4915550004', '4915550005', '4915550009', '4915550007'])
			expect(await run('sentTo', keys, [phone])).toBeNull();
	});
});

describe('reserveSuppressionCopy', () => {
	test('a number under the cap gets a copy; at the cap a new one is refused and one holding a copy keeps it', async () => {
		const holders = `${uniquePrefix()}holders`;
		expect(await run('reserveSuppressionCopy', [holders], ['4915550001', 2])).toBe(1);
		expect(await run('reserveSuppressionCopy', [holders], ['4915550002', 2])).toBe(1);
		expect(await run('reserveSuppressionCopy', [holders], ['4915550003', 2])).toBe(0);
		expect(await run('reserveSuppressionCopy', [holders], ['4915550001', 2])).toBe(1);
		expect((await connection.redis.smembers(holders)).sort()).toEqual(['4915550001', '4915550002']);
	});
});

describe('takeDue', () => {
	test('takes the waiting recipients now due out of the set, notes the progress, and says how many wait on', async () => {
		const prefix = uniquePrefix();
		const keys = [`${prefix}waiting`, `${prefix}meta`];
		const now = Date.now();
		await connection.redis.zadd(keys[0], now - 2000, '1', now - 1000, '2', now - 500, '3', now + 3_600_000, '4');
		const [due, waiting] = (await run('takeDue', keys, [2])) as [string[], number];
		expect(due).toEqual(['1', '2']);
		expect(waiting).toBe(2);
		expect(await connection.redis.zrange(keys[0], 0, -1)).toEqual(['3', '4']);
		expect(Number(await connection.redis.hget(keys[1], 'last_progress_at'))).toBeGreaterThanOrEqual(now - 1000);
		// Nothing due: nothing taken, no progress noted.
		await connection.redis.hdel(keys[1], 'last_progress_at');
		await connection.redis.zrem(keys[0], '3');
		expect(await run('takeDue', keys, [2])).toEqual([[], 1]);
		expect(await connection.redis.hexists(keys[1], 'last_progress_at')).toBe(0);
	});
});

describe('trackClaim', () => {
	test('claims the due checks, each due again after the lease unless its result is written', async () => {
		const due = `${uniquePrefix()}due`;
		await connection.redis.zadd(due, 1000, 'a', 2000, 'b', 3000, 'c', 9000, 'later');
		expect(await run('trackClaim', [due], [2500, 5, 60_000])).toEqual(['a', 'b']);
		expect(await connection.redis.zscore(due, 'a')).toBe('62500');
		expect(await connection.redis.zscore(due, 'b')).toBe('62500');
		// Leased: not claimed again before the lease ends.
		expect(await run('trackClaim', [due], [3000, 5, 60_000])).toEqual(['c']);
	});
});

describe('trackPlaces', () => {
	test('places follow each other across calls on the clock it keeps, which expires within the hour', async () => {
		const gate = `${uniquePrefix()}gate`;
		// 3 places 100 ms apart, then 2 more: the second call starts where the first stopped.
		const first = (await run('trackPlaces', [gate], [3, 100_000, 60_000])) as number[];
		const second = (await run('trackPlaces', [gate], [2, 100_000, 60_000])) as number[];
		const places = [...first.slice(1), ...second.slice(1)];
		expect(places).toHaveLength(5);
		for (let i = 1; i < places.length; i += 1) expect(places[i] - places[i - 1]).toBeGreaterThanOrEqual(99);
		expect(Number(await connection.redis.hget(gate, 'next'))).toBeGreaterThanOrEqual(places[4] * 1000);
		const ttl = await connection.redis.pttl(gate);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(3_600_000);
	});
});

describe('openSuppressionCopy', () => {
	test('a number without a copy starts an empty one at version 0; a copy with its version is kept as it is', async () => {
		const prefix = uniquePrefix();
		const keys = [`${prefix}copy`, `${prefix}version`, `${prefix}users`];
		// A copy left without its version (it expired, or a crash between the two): not trusted.
		await connection.redis.hset(keys[0], '4915550001', 'stale');
		expect(await run('openSuppressionCopy', keys, ['c1', 1000])).toBe(1);
		expect(await connection.redis.exists(keys[0])).toBe(0);
		expect(await connection.redis.get(keys[1])).toBe('0');
		await connection.redis.hset(keys[0], '4915550002', 'kept');
		await connection.redis.set(keys[1], '7');
		expect(await run('openSuppressionCopy', keys, ['c2', 2000])).toBe(1);
		expect(await connection.redis.hgetall(keys[0])).toEqual({ '4915550002': 'kept' });
		expect(await connection.redis.get(keys[1])).toBe('7');
		expect(await connection.redis.zrange(keys[2], 0, -1, 'WITHSCORES')).toEqual(['c1', '1000', 'c2', '2000']);
	});
});

describe('trackEnroll', () => {
	const keysOf = (prefix: string) => [
		`${prefix}meta`,
		`${prefix}trk`,
		`${prefix}due`,
		`${prefix}set`,
		`${prefix}outbox`,
	];
	const enroll = (keys: string[], cursorRead: number, newCursor: number, triples: string[] = []) =>
		run('trackEnroll', keys, ['c1', cursorRead, newCursor, 60_000, 'on', 5000, ...triples]);

	test('enrolls nothing and moves nothing when another walker moved the cursor first', async () => {
		const keys = keysOf(uniquePrefix());
		await connection.redis.hset(keys[0], { state: 'running', total: 2, t_cursor: 1 });
		expect(await enroll(keys, 0, 2, ['0', 'm-0', '1000'])).toBe(-1);
		expect(await connection.redis.exists(keys[1])).toBe(0);
		expect(await connection.redis.hget(keys[0], 't_cursor')).toBe('1');
	});

	test('enrolls each sent record it passes once per message id: its record, its first check, the open count, the mode', async () => {
		const keys = keysOf(uniquePrefix());
		await connection.redis.hset(keys[0], { state: 'running', total: 4, t_cursor: 0 });
		// Index 1 was enrolled for this message already; index 2 for an earlier message of a resend (its checks kept).
		await connection.redis.hset(keys[1], 1, JSON.stringify({ s: 'd', k: 1, m: 'm-1', t: '900', x: 0, o: 1 }));
		await connection.redis.hset(keys[1], 2, JSON.stringify({ s: 'f', k: 3, m: 'old', t: '800', x: 2, o: 0 }));
		await connection.redis.hset(keys[0], 't_open', 1);
		const triples = ['0', 'm-0', '1000', '1', 'm-1', '1100', '2', 'm-2', '1200'];
		expect(await enroll(keys, 0, 3, triples)).toBe(2);
		const records = await connection.redis.hmget(keys[1], '0', '1', '2');
		expect(records.map((record) => JSON.parse(record ?? '{}'))).toEqual([
			{ s: 's', k: 0, m: 'm-0', t: '1000', x: 0, o: 1 },
			{ s: 'd', k: 1, m: 'm-1', t: '900', x: 0, o: 1 },
			{ s: 's', k: 0, m: 'm-2', t: '1200', x: 2, o: 1 },
		]);
		expect(await connection.redis.zrange(keys[2], 0, -1, 'WITHSCORES')).toEqual(['c1:0', '61000', 'c1:2', '61200']);
		expect(await connection.redis.hmget(keys[0], 't_open', 't_cursor', 't_mode')).toEqual(['3', '3', 'on']);
		// A later walk in another mode keeps the first; one that enrolls nothing counts nothing.
		await connection.redis.hset(keys[0], 'total', 5);
		expect(await run('trackEnroll', keys, ['c1', 3, 4, 60_000, 'off', 5000, '0', 'm-0', '1000'])).toBe(0);
		expect(await connection.redis.hmget(keys[0], 't_open', 't_cursor', 't_mode')).toEqual(['3', '4', 'on']);
	});

	test('a campaign ended in any final state, walked to its end with nothing open, settles its delivery once', async () => {
		for (const state of ['completed', 'cancelled', 'failed', 'running']) {
			const keys = keysOf(uniquePrefix());
			await connection.redis.hset(keys[0], { state, total: 1, t_cursor: 0, t_open: 0 });
			await connection.redis.sadd(keys[3], 'c1');
			expect(await enroll(keys, 0, 1)).toBe(0);
			const settled = state !== 'running';
			expect(await connection.redis.sismember(keys[3], 'c1')).toBe(settled ? 0 : 1);
			expect(await connection.redis.hget(keys[0], 't_settled')).toBe(settled ? '5000' : null);
			// Walked again (another walker, a restart): settled already, no second event.
			expect(await enroll(keys, 1, 1)).toBe(0);
			const events = (await connection.redis.lrange(keys[4], 0, -1)).map((event) => JSON.parse(event).type);
			expect(events).toEqual(settled ? ['campaign.delivery_settled'] : []);
		}
	});
});

describe('trackResult', () => {
	const keysOf = (prefix: string) => ['meta', 'trk', 'due', 'set', 'outbox'].map((name) => `${prefix}${name}`);
	/** One open record of message m0 at step `k`, due at 2000. */
	const open = async (keys: string[], state: string, k = 0, extra: Record<string, string | number> = {}) => {
		await connection.redis.hset(keys[0], { state: 'running', total: 1, t_cursor: 1, t_open: 1, ...extra });
		await connection.redis.hset(keys[1], 0, JSON.stringify({ s: state, k, m: 'm0', t: 1000, x: 0, o: 1 }));
		await connection.redis.zadd(keys[2], 2000, 'c1:0');
		await connection.redis.sadd(keys[3], 'c1');
	};
	const result = (keys: string[], k: number, to: string, now: number, nextDue: number | '', options = { m: 'm0' }) =>
		run('trackResult', keys, ['c1', 0, options.m, k, to, now, to === 'f' ? 'undeliverable' : '', nextDue, '']);
	const record = async (keys: string[]) => JSON.parse((await connection.redis.hget(keys[1], '0')) ?? '{}');
	const counts = async (keys: string[]) =>
		connection.redis.hmget(keys[0], 't_open', 't_delivered', 't_read', 't_failed', 't_fr:undeliverable');

	test('delivered moves the step and the next due time; read closes the record and leaves the due set', async () => {
		const keys = keysOf(uniquePrefix());
		await open(keys, 's');
		expect(await result(keys, 0, 'd', 3000, 5000)).toBe(1);
		expect(await record(keys)).toMatchObject({ s: 'd', k: 1, d: '3000', o: 1 });
		expect(await connection.redis.zscore(keys[2], 'c1:0')).toBe('5000');
		expect(await result(keys, 1, 'r', 5000, 9000)).toBe(1);
		expect(await record(keys)).toMatchObject({ s: 'r', k: 2, r: '5000', o: 0 });
		expect(await connection.redis.zscore(keys[2], 'c1:0')).toBeNull();
		expect(await counts(keys)).toEqual(['0', '1', '1', null, null]);
	});

	test('a result for another message, another step or a closed record is dropped', async () => {
		const keys = keysOf(uniquePrefix());
		await open(keys, 's', 1);
		expect(await result(keys, 1, 'd', 3000, 5000, { m: 'm-other' })).toBe(0);
		expect(await result(keys, 0, 'd', 3000, 5000)).toBe(0);
		expect(await record(keys)).toMatchObject({ s: 's', k: 1, o: 1 });
		expect(await connection.redis.zscore(keys[2], 'c1:0')).toBe('2000');
		expect(await counts(keys)).toEqual(['1', null, null, null, null]);
	});

	test("a result for a record that is gone (its campaign deleted) drops the record's due entry", async () => {
		const keys = keysOf(uniquePrefix());
		await connection.redis.zadd(keys[2], 2000, 'c1:0');
		expect(await result(keys, 0, 'd', 3000, 5000)).toBe(0);
		expect(await connection.redis.zscore(keys[2], 'c1:0')).toBeNull();
		expect(await connection.redis.exists(keys[1])).toBe(0);
	});

	test('a status never moves back; a failure after delivery gives the delivered count back', async () => {
		const keys = keysOf(uniquePrefix());
		await open(keys, 'd', 1, { t_delivered: 1 });
		expect(await result(keys, 1, 's', 3000, 5000)).toBe(1);
		expect(await record(keys)).toMatchObject({ s: 'd', k: 2, o: 1 });
		expect(await result(keys, 2, 'f', 6000, 9000)).toBe(1);
		expect(await record(keys)).toMatchObject({ s: 'f', f: '6000', e: 'undeliverable', o: 0 });
		expect(await counts(keys)).toEqual(['0', '0', null, '1', '1']);
	});

	test("an unanswered check asks the same step again; the last step's answer closes the record and settles the ended campaign", async () => {
		const keys = keysOf(uniquePrefix());
		await open(keys, 's', 0, { state: 'completed' });
		expect(await run('trackResult', keys, ['c1', 0, 'm0', 0, '', 3000, '', 4000, '1'])).toBe(1);
		expect(await record(keys)).toMatchObject({ s: 's', k: 0, u: 1, o: 1 });
		expect(await connection.redis.sismember(keys[3], 'c1')).toBe(1);
		expect(await result(keys, 0, '', 5000, '')).toBe(1);
		const closed = await record(keys);
		expect(closed).toMatchObject({ s: 's', k: 1, o: 0 });
		expect(closed.u).toBeUndefined();
		expect(await connection.redis.zscore(keys[2], 'c1:0')).toBeNull();
		expect(await connection.redis.sismember(keys[3], 'c1')).toBe(0);
		const events = (await connection.redis.lrange(keys[4], 0, -1)).map((event) => JSON.parse(event).type);
		expect(events).toEqual(['campaign.delivery_settled']);
	});
});

describe('trackRequeue', () => {
	const keysOf = (prefix: string) => ['meta', 'trk', 'ledger', 'set'].map((name) => `${prefix}${name}`);
	const failed = (m: string, x = 0) => JSON.stringify({ s: 'f', k: 1, m, t: 1000, x, o: 0, e: 'undeliverable' });

	test('a failed delivery of the message the ledger holds as sent goes back to pending once; others stay', async () => {
		const keys = keysOf(uniquePrefix());
		const [meta, trk, ledger, set] = keys;
		await connection.redis.hset(meta, {
			id: 'c1',
			n_s: 4,
			n_p: 0,
			t_failed: 3,
			't_fr:undeliverable': 3,
			t_cursor: 4,
		});
		// 0: requeued; 1: the ledger holds a later message; 2: requeued before; 3: delivered.
		await connection.redis.hset(trk, {
			0: failed('m0'),
			1: failed('m1'),
			2: failed('m2', 1),
			3: JSON.stringify({ s: 'd', k: 1, m: 'm3', t: 1000, x: 0, o: 1 }),
		});
		await connection.redis.hset(ledger, {
			0: 's|1|900|1000|m0|',
			1: 's|2|900|3000|m1-later|',
			2: 's|1|900|1000|m2|',
			3: 's|1|900|1000|m3|',
		});
		const pairs = ['0', 'm0', '1', 'm1', '2', 'm2', '3', 'm3'];
		expect(await run('trackRequeue', keys, [5000, ...pairs])).toBe(1);
		expect(await connection.redis.hget(ledger, '0')).toBe('p|1|900|1000||');
		expect(JSON.parse((await connection.redis.hget(trk, '0')) ?? '{}')).toMatchObject({ s: 'q', x: 1, o: 0 });
		expect(await connection.redis.hmget(ledger, '1', '2', '3')).toEqual([
			's|2|900|3000|m1-later|',
			's|1|900|1000|m2|',
			's|1|900|1000|m3|',
		]);
		expect(
			await connection.redis.hmget(meta, 'n_s', 'n_p', 't_failed', 't_fr:undeliverable', 't_requeued', 't_cursor'),
		).toEqual(['3', '1', '2', '2', '1', '0']);
		expect(await connection.redis.sismember(set, 'c1')).toBe(1);
		// A second retry finds nothing left to requeue, and walks nothing again.
		await connection.redis.hset(meta, 't_cursor', 4);
		expect(await run('trackRequeue', keys, [6000, ...pairs])).toBe(0);
		expect(await connection.redis.hget(meta, 't_cursor')).toBe('4');
	});
});

describe('transition', () => {
	const keysOf = (prefix: string) =>
		['meta', 'running', 'finishing', 'outbox', 'rows', 'ledger', 'phones'].map((name) => `${prefix}${name}`);
	const move = (keys: string[], to: string, allowed: string[], event = '', ending = '0', fields: string[] = []) =>
		run('transition', keys, ['c1', 5000, to, `,${allowed.join(',')},`, event, ending, ...fields]);
	const events = async (outbox: string) =>
		(await connection.redis.lrange(outbox, 0, -1)).map((entry) => (JSON.parse(entry) as { type: string }).type);

	test('a campaign that is gone, or in a state the move is not allowed from, is left as it is', async () => {
		const keys = keysOf(uniquePrefix());
		expect(await move(keys, 'running', ['paused'], 'campaign.resumed')).toBe('missing');
		expect(await connection.redis.exists(keys[0], keys[1], keys[3])).toBe(0);
		await connection.redis.hset(keys[0], 'state', 'completed');
		expect(await move(keys, 'running', ['paused'], 'campaign.resumed', '0', ['cursor', '0'])).toBe('no:completed');
		expect(await connection.redis.hgetall(keys[0])).toEqual({ state: 'completed' });
		expect(await connection.redis.exists(keys[1], keys[3])).toBe(0);
	});

	test('a move writes the state and its fields, joins or leaves the running set, marks an end, and reports its event', async () => {
		const keys = keysOf(uniquePrefix());
		const [meta, running, finishing, outbox] = keys;
		await connection.redis.hset(meta, { state: 'paused', cursor: 9 });
		expect(await move(keys, 'running', ['paused'], 'campaign.resumed', '0', ['cursor', '0'])).toBe('ok:paused');
		expect(await connection.redis.hmget(meta, 'state', 'cursor')).toEqual(['running', '0']);
		expect(await connection.redis.smembers(running)).toEqual(['c1']);
		expect(await connection.redis.exists(finishing)).toBe(0);
		expect(await move(keys, 'cancelled', ['running'], '', '1')).toBe('ok:running');
		expect(await connection.redis.sismember(running, 'c1')).toBe(0);
		expect(await connection.redis.smembers(finishing)).toEqual(['c1']);
		expect(await events(outbox)).toEqual(['campaign.resumed']);
	});

	test('a draft that starts keeps its rows, ledger and phone index for good; another move keeps their expiry', async () => {
		for (const from of ['draft', 'paused']) {
			const keys = keysOf(uniquePrefix());
			const [meta, , , , rows, ledger, phones] = keys;
			await connection.redis.hset(meta, 'state', from);
			for (const key of [meta, rows, ledger, phones]) {
				if (key !== meta) await connection.redis.hset(key, '0', 'x');
				await connection.redis.pexpire(key, 60_000);
			}
			expect(await move(keys, 'running', [from])).toBe(`ok:${from}`);
			const ttls = await Promise.all([meta, rows, ledger, phones].map((key) => connection.redis.pttl(key)));
			if (from === 'draft') expect(ttls).toEqual([-1, -1, -1, -1]);
			else expect(ttls.every((ttl) => ttl > 0)).toBe(true);
		}
	});
});

describe('dropDraft', () => {
	const keysOf = (prefix: string) => ['meta', 'rows', 'ledger', 'phones', 'unlisted'].map((name) => `${prefix}${name}`);

	test('a draft whose time is up goes with its rows, ledger, phone index and listing; a started one stays', async () => {
		for (const state of ['draft', undefined, 'running']) {
			const keys = keysOf(uniquePrefix());
			const [meta, rows, ledger, phones, unlisted] = keys;
			if (state) await connection.redis.hset(meta, 'state', state);
			for (const key of [rows, ledger, phones]) await connection.redis.hset(key, '0', 'x');
			await connection.redis.zadd(unlisted, 1000, 'c1', 1000, 'c2');
			const dropped = state !== 'running';
			expect(await run('dropDraft', keys, ['c1'])).toBe(dropped ? 1 : 0);
			expect(await connection.redis.exists(rows, ledger, phones)).toBe(dropped ? 0 : 3);
			expect(await connection.redis.hget(meta, 'state')).toBe(dropped ? null : 'running');
			expect(await connection.redis.zrange(unlisted, 0, -1)).toEqual(dropped ? ['c2'] : ['c1', 'c2']);
		}
	});
});

describe('freeSuppressionCopy', () => {
	test("a number's copy goes with its last user; finished campaigns and long-gone creates let go, running ones and a create under way keep it", async () => {
		const prefix = uniquePrefix();
		const [copy, version, users] = ['copy', 'version', 'users'].map((name) => `${prefix}${name}`);
		const campaigns = `${prefix}campaign:`;
		await connection.redis.sadd(copy, '4915550000001');
		await connection.redis.set(version, 7);
		for (const [id, state] of [
			['done', 'completed'],
			['stopped', 'cancelled'],
			['broken', 'failed'],
			['live', 'running'],
		])
			await connection.redis.hset(`${campaigns}${id}`, 'state', state);
		// Users with no campaign: one that joined before the cut-off (a create that died), one after (under way).
		await connection.redis.zadd(users, 1, 'done', 1, 'stopped', 1, 'broken', 1, 'live', 100, 'dead', 900, 'creating');
		expect(await run('freeSuppressionCopy', [copy, version, users], [campaigns, 500])).toBe(0);
		expect(await connection.redis.zrange(users, 0, -1)).toEqual(['live', 'creating']);
		expect(await connection.redis.exists(copy, version)).toBe(2);
		await connection.redis.hset(`${campaigns}live`, 'state', 'completed');
		await connection.redis.hset(`${campaigns}creating`, 'state', 'failed');
		expect(await run('freeSuppressionCopy', [copy, version, users], [campaigns, 500])).toBe(1);
		expect(await connection.redis.exists(copy, version, users)).toBe(0);
	});
});

describe('changeSuppression', () => {
	test('a change that changes nothing (a phone not listed removed, a full list) takes no version', async () => {
		const prefix = uniquePrefix();
		const keys = ['entries', 'listed', 'changed', 'version'].map((name) => `${prefix}${name}`);
		await connection.redis.set(keys[3], 5);
		expect(await run('changeSuppression', keys, ['remove', 10, '4915550000001'])).toEqual([0, 0, 0]);
		expect(await run('changeSuppression', keys, ['add', 0, '4915550000002', 1000, '{"s":"api"}'])).toEqual([0, 0, 1]);
		expect(await connection.redis.get(keys[3])).toBe('5');
		expect(await connection.redis.exists(keys[0], keys[1], keys[2])).toBe(0);
	});
});

describe('applySuppressions', () => {
	const copyOf = async (version?: number) => {
		const prefix = uniquePrefix();
		const keys = [`${prefix}copy`, `${prefix}version`];
		if (version !== undefined) await connection.redis.set(keys[1], version);
		return keys;
	};
	const apply = (keys: string[], ...args: Array<string | number>) => run('applySuppressions', keys, args);
	const copied = async (keys: string[]) => [
		await connection.redis.hgetall(keys[0]),
		await connection.redis.get(keys[1]),
	];

	test('a number without a copy is written nothing', async () => {
		const keys = await copyOf();
		expect(await apply(keys, 'change', 0, 1, '4915550000001', 'n')).toBe('none');
		expect(await connection.redis.exists(...keys)).toBe(0);
	});

	test('a change is written only onto the version it follows: done when past it, a gap when one is missing', async () => {
		const keys = await copyOf(3);
		expect(await apply(keys, 'change', 3, 4, '4915550000001', 'n1')).toBe('ok');
		expect(await copied(keys)).toEqual([{ '4915550000001': 'n1' }, '4']);
		expect(await apply(keys, 'change', 3, 4, '4915550000001', '')).toBe('done');
		expect(await apply(keys, 'change', 5, 6, '4915550000002', 'n2')).toBe('gap');
		expect(await copied(keys)).toEqual([{ '4915550000001': 'n1' }, '4']);
		// A removal ('' as its note) takes the phone out.
		expect(await apply(keys, 'change', 4, 5, '4915550000001', '')).toBe('ok');
		expect(await copied(keys)).toEqual([{}, '5']);
	});

	test("a repair's page is written unless the copy is past its target; its end moves the version only from its base", async () => {
		const keys = await copyOf(2);
		expect(await apply(keys, 'replay', 2, '4915550000001', 'n1', '4915550000002', 'n2')).toBe('ok');
		expect(await apply(keys, 'replay', 1, '4915550000003', 'n3')).toBe('ahead');
		expect(await copied(keys)).toEqual([{ '4915550000001': 'n1', '4915550000002': 'n2' }, '2']);
		expect(await apply(keys, 'finish', 1, 9)).toBe('moved');
		expect(await apply(keys, 'finish', 2, 9)).toBe('ok');
		expect(await copied(keys)).toEqual([{ '4915550000001': 'n1', '4915550000002': 'n2' }, '9']);
	});
});

describe("a send job's volley of starts (start-11.lua claims it, settleAndPlace-9.lua settles it)", () => {
	const ROOM = 0.04;
	/** Microseconds between two places at 1,000/s and the default room (startGateMath.ts gapUs). */
	const GAP_AT_1000 = Math.max(1_040_000 / 1000, 1_000_000 / 960) * 1.002;
	/** A running campaign of `recipients` pending on a number at `rate` (none: a number without a rate). */
	const job = async (rate: number | undefined, recipients: number) => {
		const prefix = uniquePrefix();
		const names = ['spacing', 'log', 'meta', 'ledger', 'running', 'outbox', 'rows', 'suppressed', 'policy', 'sends'];
		const keys = [...names, 'waiting'].map((name) => `${prefix}${name}`);
		const [spacing, log, meta, ledger, running] = keys;
		if (rate !== undefined) await connection.redis.hset(spacing, 'rate', rate);
		await connection.redis.hset(meta, { state: 'running', n_p: recipients, n_c: 0 });
		await connection.redis.sadd(running, 'c1');
		for (let index = 0; index < recipients; index++) {
			await connection.redis.hset(ledger, index, 'p|0||||');
			await connection.redis.hset(keys[6], index, `[1,"4915277${String(index).padStart(5, '0')}",{}]`);
		}
		/** lua/start-11.lua for the job's [first, end) by token `t`. */
		const start = async (
			member: string,
			range: [number, number],
			options: Omit<StartScriptCall, 'member' | 'range' | 'again'> = {},
		) =>
			(await run('start', keys, startScriptArgs({ member, range, ...options }, ROOM))) as Array<number | string | null>;
		const startAgain = async (member: string, size: number) =>
			(await run('start', keys, startScriptArgs({ member, again: size }, ROOM))) as Array<number | string>;
		/** lua/settleAndPlace-9.lua: the volley's final settles by token `t`, the job ending at `end`. */
		const settle = async (end: number, settles: Array<[number, 's' | 'f' | 'u']>, place = true, pauseAfter = 10) =>
			(await run(
				'settleAndPlace',
				[meta, ledger, running, keys[5], `${prefix}ticks`, spacing, keys[6], keys[9], `${prefix}daily`],
				[
					Date.now(),
					pauseAfter,
					'c1',
					end,
					ROOM,
					10,
					't',
					place ? '1' : '',
					...settles.flatMap(([index, to]) => [index, to, to === 's' ? `m${index}` : '', to === 's' ? '' : 'no']),
				],
			)) as Array<number | string>;
		const states = async (indexes: number[]) =>
			(await connection.redis.hmget(ledger, ...indexes.map(String))).map((record) => record?.split('|')[0]);
		return { keys, spacing, log, meta, ledger, start, startAgain, settle, states };
	};
	const claimedIndexes = (reply: Array<number | string | null>) => reply.slice(2).filter((_, at) => at % 3 === 0);

	test('at 1,000/s a job takes ten starts at one time and claims ten recipients in one call; the clock moves on ten places', async () => {
		const { spacing, log, start, states } = await job(1000, 50);
		const reply = await start('g1', [0, 50]);
		expect(reply[0]).toBe(0);
		expect(claimedIndexes(reply)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
		// Each claimed recipient's attempts and snapshot row come with it.
		expect(reply.slice(3, 5)).toEqual([1, '[1,"491527700000",{}]']);
		expect(await states([0, 9, 10])).toEqual(['c', 'c', 'p']);
		const logged = await connection.redis.zrange(log, 0, -1, 'WITHSCORES');
		expect(logged.filter((_, at) => at % 2 === 0).sort()).toEqual(
			['g1', ...Array.from({ length: 9 }, (_, k) => `g1+${k + 2}`)].sort(),
		);
		expect(new Set(logged.filter((_, at) => at % 2 === 1))).toEqual(new Set([String(reply[1])]));
		const next = Number(await connection.redis.hget(spacing, 'next'));
		expect(next - Number(reply[1])).toBeCloseTo(10 * GAP_AT_1000, -1);
	});

	test("a volley ends at the job's last index and passes what is settled; one alone while a re-check is open, or at 0 ms", async () => {
		const { meta, ledger, start, states } = await job(1000, 50);
		await connection.redis.hset(ledger, 41, 's|1|1|1|m41|');
		expect(claimedIndexes(await start('a', [40, 43]))).toEqual([40, 42]);
		expect(await states([40, 41, 42, 43])).toEqual(['c', 's', 'c', 'p']);
		expect(claimedIndexes(await start('b', [0, 50], { volleyMs: 0, first: false }))).toEqual([0]);
		await connection.redis.hset(meta, 'recheck', '1');
		expect(claimedIndexes(await start('c', [10, 50], { first: false }))).toEqual([10]);
		// Below 200/s the default span holds one start.
		const slow = await job(150, 5);
		expect(claimedIndexes(await slow.start('d', [0, 5]))).toEqual([0]);
	});

	test('a rate span with room for fewer starts than the volley makes it wait, claiming nobody', async () => {
		const { log, start, states } = await job(20, 10);
		const [seconds, micros] = await connection.redis.time();
		const now = Number(seconds) * 1_000_000 + Number(micros);
		// 19 starts of the last second: room for one, and a volley of 2 at 20/s and 100 ms.
		for (let k = 0; k < 19; k++) await connection.redis.zadd(log, now - 500_000, `s${k}`);
		const reply = await start('g', [0, 10], { volleyMs: 100 });
		expect(reply[0]).toBeGreaterThan(0);
		expect(await states([0, 1])).toEqual(['p', 'p']);
		expect(await connection.redis.zscore(log, 'g')).toBeNull();
		// The same on a later call, whose place was taken: it waits before the volley's other recipients are looked for.
		const later = await start('g', [0, 10], { volleyMs: 100, first: false });
		expect(later).toHaveLength(1);
		expect(later[0]).toBeGreaterThan(0);
		expect(await states([0, 1])).toEqual(['p', 'p']);
		await connection.redis.zremrangebyrank(log, 0, 0);
		// With room for two, both go.
		const place = reply[1] ? String(reply[1]) : '';
		expect(claimedIndexes(await start('g', [0, 10], { volleyMs: 100, first: false, place }))).toEqual([0, 1]);
	});

	test('a volley may bring the last second to its cap with its starts after the first on top', async () => {
		const { log, startAgain } = await job(1000, 0);
		/** `count` starts half a second ago: inside the last second, far from either bound. */
		const plant = async (count: number) => {
			await connection.redis.del(log);
			const at = (await redisNowUs()) - 500_000;
			await connection.redis.zadd(log, ...Array.from({ length: count }, (_, k) => [at, `s${k}`]).flat());
		};
		// At 1,000/s the cap is 960: a volley of ten goes while the second holds 959 (969 then), not 960.
		expect(volleyCap(1000, 10, ROOM)).toBe(969);
		await plant(959);
		expect((await startAgain('v', 10))[0]).toBe(0);
		expect(await connection.redis.zcard(log)).toBe(969);
		await plant(960);
		const [wait] = await startAgain('v', 10);
		expect(wait).toBeGreaterThan(0);
		expect(wait).toBeLessThanOrEqual(500_000);
		expect(await connection.redis.zcard(log)).toBe(960);
	});

	test('a volley that finds one recipient open is counted as that lone start: at its place, when the span is full there', async () => {
		const { log, ledger, start, states } = await job(1000, 10);
		for (let index = 1; index < 10; index++) await connection.redis.hset(ledger, index, `s|1|1|1|m${index}|`);
		const now = await redisNowUs();
		const place = now - 40_000;
		// A full span at the place, none of it left at the call: room for the volley of ten now, none for one at its place.
		const full = Array.from({ length: 1000 }, (_, k) => [now - 1_040_000 - 20_000, `s${k}`]).flat();
		await connection.redis.zadd(log, ...(full as Array<number | string>));
		const reply = await start('a', [0, 10], { first: false, place: String(place), lateMs: 60_000 });
		expect(reply).toHaveLength(1);
		expect(await states([0])).toEqual(['p']);
		await connection.redis.del(log);
		expect(claimedIndexes(await start('a', [0, 10], { first: false, place: String(place), lateMs: 60_000 }))).toEqual([
			0,
		]);
	});

	test('a start without a claim (a send outside a job) takes one place and one start', async () => {
		const { spacing, log, start } = await job(1000, 0);
		const before = await redisNowUs();
		const reply = await start('n', ['', ''] as unknown as [number, number]);
		expect(reply).toEqual([0, expect.any(String)]);
		expect(await connection.redis.zrange(log, 0, -1)).toEqual(['n']);
		const after = await redisNowUs();
		// One gap on from the call's own time.
		const next = Number(await connection.redis.hget(spacing, 'next'));
		expect(next).toBeGreaterThanOrEqual(before + GAP_AT_1000 - 1);
		expect(next).toBeLessThanOrEqual(after + GAP_AT_1000 + 1);
	});

	describe("the audience rules on the way to a job's next recipients (includes/jobClaim.lua)", () => {
		const phone = (index: number) => `4915277${String(index).padStart(5, '0')}`;

		test('suppressed and capped recipients are made final with their reason; the rest of the volley is claimed and counted on the cap', async () => {
			const { keys, meta, ledger, start, states } = await job(1000, 6);
			const nowMs = Math.floor((await redisNowUs()) / 1000);
			await connection.redis.hset(keys[7], phone(1), 'opted out by keyword');
			await connection.redis.set(keys[8], 'once a day:1:86400000');
			await connection.redis.set(`${keys[9]}${phone(2)}`, String(nowMs - 1000));
			expect(claimedIndexes(await start('a', [0, 6]))).toEqual([0, 3, 4, 5]);
			expect(await states([0, 1, 2, 3, 4, 5])).toEqual(['c', 'z', 'k', 'c', 'c', 'c']);
			const [suppressed, capped] = await connection.redis.hmget(ledger, '1', '2');
			expect(suppressed?.split('|')[5]).toBe('opted out by keyword');
			expect(capped?.split('|')[5]).toMatch(/^frequency cap once a day: next allowed \d{4}-/);
			expect(await connection.redis.hmget(meta, 'n_p', 'n_c', 'n_z', 'n_k')).toEqual(['0', '4', '1', '1']);
			// Each claim counts on its phone's cap.
			expect(Number(await connection.redis.get(`${keys[9]}${phone(0)}`))).toBeGreaterThanOrEqual(nowMs);
		});

		test('a transactional campaign claims suppressed and capped recipients all the same', async () => {
			const { keys, meta, start, states } = await job(1000, 3);
			await connection.redis.hset(meta, 'transactional', '1');
			const nowMs = Math.floor((await redisNowUs()) / 1000);
			await connection.redis.hset(keys[7], phone(1), 'opted out by keyword');
			await connection.redis.set(keys[8], 'once a day:1:86400000');
			await connection.redis.set(`${keys[9]}${phone(2)}`, String(nowMs - 1000));
			expect(claimedIndexes(await start('a', [0, 3]))).toEqual([0, 1, 2]);
			expect(await states([0, 1, 2])).toEqual(['c', 'c', 'c']);
		});

		test("past the campaign's end its pending recipients expire, and with nobody left the campaign completes", async () => {
			const { meta, ledger, start, states } = await job(1000, 3);
			const nowMs = Math.floor((await redisNowUs()) / 1000);
			await connection.redis.hset(meta, 'end_at', nowMs - 1000);
			expect(await start('a', [0, 3])).toEqual([-2]);
			expect(await states([0, 1, 2])).toEqual(['e', 'e', 'e']);
			expect((await connection.redis.hget(ledger, '0'))?.split('|')[5]).toBe('the campaign ended before it was sent');
			expect(await connection.redis.hmget(meta, 'n_p', 'n_e', 'state')).toEqual(['0', '3', 'completed']);
			// Before its end, they go.
			const open = await job(1000, 2);
			await connection.redis.hset(open.meta, 'end_at', nowMs + 60_000);
			expect(claimedIndexes(await open.start('b', [0, 2]))).toEqual([0, 1]);
		});

		test("an A/B test before its winner leaves the remainder's rows pending, untouched", async () => {
			const { keys, meta, start, states } = await job(1000, 4);
			await connection.redis.hset(keys[6], '0', `[1,"${phone(0)}",{},0]`, '1', `[1,"${phone(1)}",{},1]`);
			await connection.redis.hset(keys[6], '2', `[1,"${phone(2)}",{},0]`, '3', `[1,"${phone(3)}",{},2]`);
			for (const phase of ['testing', 'waiting']) {
				await connection.redis.hset(meta, 'ab_phase', phase);
				expect({ phase, claimed: claimedIndexes(await start(phase, [0, 4], { first: false })) }).toEqual({
					phase,
					claimed: [1, 3],
				});
				expect(await states([0, 2])).toEqual(['p', 'p']);
				await connection.redis.hset(meta, { n_p: 4, n_c: 0 });
				for (const index of [1, 3]) await connection.redis.hset(keys[3], index, 'p|0||||');
			}
			await connection.redis.hset(meta, 'ab_phase', 'decided');
			expect(claimedIndexes(await start('decided', [0, 4], { first: false }))).toEqual([0, 1, 2, 3]);
		});

		test("a claim an earlier attempt left turns unknown; this attempt's own claim is sent again, not counted again", async () => {
			const { meta, ledger, start, states } = await job(1000, 6);
			await connection.redis.hset(ledger, { 0: 'c|1|100|100|t|', 1: 'c|1|100|100|other|', 3: 'p|1|100|100||' });
			await connection.redis.hset(meta, { n_p: 4, n_c: 2 });
			const reply = await start('a', [0, 6]);
			expect(claimedIndexes(reply)).toEqual([0, 2, 3, 4, 5]);
			// Attempts as the claim answers them: the retried claim 1, a pending one retried 2; the
			// retried claim with its snapshot row, as a pending one.
			expect(reply.slice(3, 5)).toEqual([1, `[1,"${phone(0)}",{}]`]);
			expect(await states([0, 1, 2, 3])).toEqual(['c', 'u', 'c', 'c']);
			const [own, lost, retried] = await connection.redis.hmget(ledger, '0', '1', '3');
			expect(own).toBe('c|1|100|100|t|');
			expect(lost?.split('|')[5]).toMatch(/^an earlier attempt claimed this send and never settled it/);
			expect(retried?.split('|').slice(0, 2)).toEqual(['c', '2']);
			expect(retried?.split('|')[2]).toBe('100');
			expect(await connection.redis.hmget(meta, 'n_p', 'n_c', 'n_u')).toEqual(['0', '5', '1']);
			// A job whose one open recipient is its own claim: nobody's suppression is asked, it is sent again.
			const alone = await job(1000, 2);
			await connection.redis.hset(alone.ledger, { 0: 's|1|100|100|m0|', 1: 'c|1|100|100|t|' });
			await connection.redis.hset(alone.meta, { n_p: 0, n_c: 1, n_s: 1 });
			expect((await alone.start('b', [0, 2])).slice(2)).toEqual([1, 1, `[1,"${phone(1)}",{}]`]);
		});
	});

	test("a volley's starts taken again replace all of them", async () => {
		const { log, start, startAgain } = await job(1000, 20);
		const first = await start('g', [0, 20]);
		expect(claimedIndexes(first)).toHaveLength(10);
		const again = await startAgain('g', 10);
		expect(again[0]).toBe(0);
		const logged = await connection.redis.zrange(log, 0, -1, 'WITHSCORES');
		expect(logged.length).toBe(20);
		expect(new Set(logged.filter((_, at) => at % 2 === 1))).toEqual(new Set([String(again[1])]));
	});

	test("a volley's final settles in one call: each recipient's outcome, then the next volley's place", async () => {
		const { spacing, meta, start, settle, states } = await job(1000, 30);
		expect(claimedIndexes(await start('g', [0, 25]))).toHaveLength(10);
		const before = Number(await connection.redis.hget(spacing, 'next'));
		const settled = await settle(25, [
			[0, 's'],
			[1, 'f'],
			[2, 'u'],
			...Array.from({ length: 7 }, (_, k): [number, 's'] => [k + 3, 's']),
		]);
		expect(settled[0]).toBe('ok');
		expect(Number(settled[1])).toBeGreaterThanOrEqual(0);
		expect(Number(settled[2])).toBeGreaterThanOrEqual(before);
		expect(await states([0, 1, 2, 3, 9, 10])).toEqual(['s', 'f', 'u', 's', 's', 'p']);
		expect(await connection.redis.hmget(meta, 'n_s', 'n_f', 'n_u', 'n_c')).toEqual(['8', '1', '1', '0']);
		// The next volley is the job's last ten of fifteen left: ten places on.
		expect(Number(await connection.redis.hget(spacing, 'next')) - Number(settled[2])).toBeCloseTo(10 * GAP_AT_1000, -1);

		// A volley without a place asked takes none; the one holding the job's last index ends the job.
		expect(claimedIndexes(await start('h', [10, 25], { first: false }))).toHaveLength(10);
		expect(
			await settle(
				25,
				Array.from({ length: 10 }, (_, k): [number, 's'] => [k + 10, 's']),
				false,
			),
		).toEqual(['ok', -1]);
		expect(claimedIndexes(await start('i', [20, 25], { first: false }))).toEqual([20, 21, 22, 23, 24]);
		const partial = await settle(25, [
			[20, 's'],
			[21, 's'],
			[22, 's'],
			[23, 's'],
		]);
		// One index left: the next volley's place is one place on.
		expect(partial[0]).toBe('ok');
		expect(Number(await connection.redis.hget(spacing, 'next')) - Number(partial[2])).toBeCloseTo(GAP_AT_1000, -1);
		expect(await settle(25, [[24, 's']])).toEqual(['ok', -2]);
	});

	test("a volley of sends settles as each send would, the campaign's counts written once", async () => {
		const { meta, ledger, start, settle, states } = await job(1000, 10);
		const claimed = await start('g', [0, 10]);
		expect(claimedIndexes(claimed)).toHaveLength(10);
		const claimedAt = ((await connection.redis.hget(ledger, '9')) ?? '').split('|')[3];
		// One claim turned unknown by a sweep meanwhile: its send may still prove it sent.
		await connection.redis.hset(ledger, 2, ((await connection.redis.hget(ledger, '2')) ?? '').replace(/^c/, 'u'));
		await connection.redis.hset(meta, { n_c: 9, n_u: 1, failure_streak: 3, recheck: '1', budget_next_at: '1' });
		const before = Date.now();
		expect(
			await settle(
				10,
				Array.from({ length: 10 }, (_, k): [number, 's'] => [k, 's']),
				false,
			),
		).toEqual(['completed', -1]);
		expect(await states([0, 2, 9])).toEqual(['s', 's', 's']);
		expect(((await connection.redis.hget(ledger, '2')) ?? '').split('|')[4]).toBe('m2');
		expect(
			await connection.redis.hmget(meta, 'n_s', 'n_c', 'n_u', 'failure_streak', 'budget_next_at', 'sent_claimed_at'),
		).toEqual(['10', '0', '0', '0', '', claimedAt]);
		expect(await connection.redis.hexists(meta, 'recheck')).toBe(0);
		expect(Number(await connection.redis.hget(meta, 'last_progress_at'))).toBeGreaterThanOrEqual(before);
		const prefix = meta.slice(0, -'meta'.length);
		const daily = await connection.redis.hgetall(`${prefix}daily`);
		expect(Object.entries(daily)).toEqual([[`${Math.floor(before / 86_400_000)}:s`, '10']]);
		expect(Object.values(await connection.redis.hgetall(`${prefix}ticks`))).toEqual(['10']);
	});

	test('a volley whose every claim a sweep turned unknown proves them sent, and the campaign completes', async () => {
		const { meta, ledger, start, settle, states } = await job(1000, 2);
		expect(claimedIndexes(await start('g', [0, 2], { volleyMs: 2 }))).toEqual([0, 1]);
		for (const index of ['0', '1'])
			await connection.redis.hset(
				ledger,
				index,
				((await connection.redis.hget(ledger, index)) ?? '').replace(/^c/, 'u'),
			);
		await connection.redis.hset(meta, { n_c: 0, n_u: 2 });
		expect(
			await settle(
				2,
				[
					[0, 's'],
					[1, 's'],
				],
				false,
			),
		).toEqual(['completed', -1]);
		expect(await states([0, 1])).toEqual(['s', 's']);
		expect(await connection.redis.hmget(meta, 'n_s', 'n_u', 'state')).toEqual(['2', '0', 'completed']);
	});

	test('a lost claim in the volley is answered, and the job takes no place', async () => {
		const { ledger, start, settle, states } = await job(1000, 10);
		expect(claimedIndexes(await start('g', [0, 10], { volleyMs: 3 }))).toEqual([0, 1, 2]);
		// Claimed again by another attempt meanwhile (an expired claim's).
		await connection.redis.hset(ledger, 1, 'c|2|1|1|other|');
		expect(
			await settle(10, [
				[0, 's'],
				[1, 's'],
				[2, 's'],
			]),
		).toEqual(['lost', -1]);
		expect(await states([0, 1, 2])).toEqual(['s', 'c', 's']);

		// The same in a volley with a failure (each settled in turn), and in one whose every claim was lost.
		const mixed = await job(1000, 10);
		expect(claimedIndexes(await mixed.start('h', [0, 10], { volleyMs: 3 }))).toEqual([0, 1, 2]);
		await connection.redis.hset(mixed.ledger, 1, 'c|2|1|1|other|');
		expect(
			await mixed.settle(10, [
				[0, 'f'],
				[1, 's'],
				[2, 's'],
			]),
		).toEqual(['lost', -1]);
		expect(await mixed.states([0, 1, 2])).toEqual(['f', 'c', 's']);
		const gone = await job(1000, 10);
		expect(claimedIndexes(await gone.start('i', [0, 10], { volleyMs: 2 }))).toEqual([0, 1]);
		for (const index of [0, 1]) await connection.redis.hset(gone.ledger, index, 'c|2|1|1|other|');
		const untouched = await connection.redis.hgetall(gone.meta);
		expect(
			await gone.settle(10, [
				[0, 's'],
				[1, 's'],
			]),
		).toEqual(['lost', -1]);
		expect(await connection.redis.hgetall(gone.meta)).toEqual(untouched);
	});
	const redisNowUs = async () => {
		const [seconds, micros] = await connection.redis.time();
		return Number(seconds) * 1_000_000 + Number(micros);
	};

	test('a number without a rate sends one at a time and its settle takes no place', async () => {
		const { spacing, log, start, settle } = await job(undefined, 5);
		const reply = await start('a', [0, 5]);
		expect(claimedIndexes(reply)).toEqual([0]);
		expect(await connection.redis.exists(log)).toBe(0);
		expect(await settle(5, [[0, 's']])).toEqual(['ok', -1]);
		expect(await connection.redis.hexists(spacing, 'next')).toBe(0);
	});

	test('a volley that pauses its campaign, or completes it, answers that state and takes no place', async () => {
		const paused = await job(1000, 10);
		expect(claimedIndexes(await paused.start('a', [0, 10], { volleyMs: 3 }))).toEqual([0, 1, 2]);
		expect(
			await paused.settle(
				10,
				[
					[0, 'f'],
					[1, 'f'],
					[2, 'f'],
				],
				true,
				2,
			),
		).toEqual(['paused', -1]);
		const done = await job(1000, 2);
		expect(claimedIndexes(await done.start('b', [0, 2]))).toEqual([0, 1]);
		expect(
			await done.settle(10, [
				[0, 's'],
				[1, 's'],
			]),
		).toEqual(['completed', -1]);
	});

	test('a campaign not running, or a job with nobody left, takes no start and claims nobody', async () => {
		const { meta, ledger, log, start, states } = await job(1000, 3);
		await connection.redis.hset(meta, 'state', 'paused');
		expect(await start('a', [0, 3])).toEqual([-1]);
		await connection.redis.hset(meta, 'state', 'running');
		for (const index of [0, 1, 2]) await connection.redis.hset(ledger, index, 's|1|1|1|m|');
		expect(await start('b', [0, 3])).toEqual([-2]);
		expect(await connection.redis.exists(log)).toBe(0);
		expect(await states([0])).toEqual(['s']);
	});

	test("outside its send window's opening, or too near its close, a job takes no start", async () => {
		const { log, start, states } = await job(1000, 3);
		const nowMs = Math.floor((await redisNowUs()) / 1000);
		expect(await start('a', [0, 3], { opening: [nowMs + 60_000, nowMs + 120_000] })).toEqual([-3]);
		// Closing within the margin (2 s here): the send might reach the service after the close.
		expect(await start('b', [0, 3], { opening: [nowMs - 60_000, nowMs + 1000] })).toEqual([-3]);
		expect(await connection.redis.exists(log)).toBe(0);
		expect(claimedIndexes(await start('c', [0, 3], { opening: [nowMs - 60_000, nowMs + 60_000] }))).toEqual([0, 1, 2]);
		expect(await states([0, 1, 2])).toEqual(['c', 'c', 'c']);
	});

	test("a resume's re-check: one start at a time, holding it while out; the others wait", async () => {
		const { meta, start, states } = await job(1000, 10);
		await connection.redis.hset(meta, 'recheck', '1');
		const nowMs = Math.floor((await redisNowUs()) / 1000);
		expect(claimedIndexes(await start('a', [0, 10]))).toEqual([0]);
		// Held for a claim's lifetime (20 s here) while its one send is out.
		const held = Number(await connection.redis.hget(meta, 'recheck'));
		expect(held).toBeGreaterThanOrEqual(nowMs + 20_000);
		expect(held).toBeLessThan(nowMs + 25_000);
		// Another job meanwhile waits the re-check's wait (200 ms here), claiming nobody.
		expect(await start('b', [5, 10], { first: false })).toEqual([200_000]);
		expect(await states([5])).toEqual(['p']);
		// A hold that has passed lets the next start through.
		await connection.redis.hset(meta, 'recheck', String(nowMs - 1));
		expect(claimedIndexes(await start('c', [5, 10], { first: false }))).toEqual([5]);
	});

	test("a first call behind the number's clock waits for the place it took, and names it", async () => {
		const { spacing, start, states } = await job(1000, 20);
		const ahead = (await redisNowUs()) + 60_000_000;
		await connection.redis.hset(spacing, 'next', String(ahead));
		const reply = await start('a', [0, 20]);
		expect(reply).toHaveLength(2);
		expect(Number(reply[0])).toBeGreaterThan(50_000_000);
		expect(reply[1]).toBe(String(ahead));
		expect(await states([0])).toEqual(['p']);
		expect(Number(await connection.redis.hget(spacing, 'next')) - ahead).toBeCloseTo(10 * GAP_AT_1000, -1);
	});

	test('a lone start a little after its place counts at it; a volley, or one long after, counts when it goes', async () => {
		// A wide allowance where the start must count at its place, so a slow call cannot make it late.
		const lone = await job(100, 10);
		const place = (await redisNowUs()) - 5_000;
		const onTime = await lone.start('a', [0, 10], { first: false, place: String(place), lateMs: 60_000 });
		expect(claimedIndexes(onTime)).toEqual([0]);
		expect(await connection.redis.zscore(lone.log, 'a')).toBe(String(place));
		// A place not come yet is not counted at.
		const early = (await redisNowUs()) + 60_000_000;
		await lone.start('b', [1, 10], { first: false, place: String(early), lateMs: 60_000 });
		expect(Number(await connection.redis.zscore(lone.log, 'b'))).toBeLessThan(early - 50_000_000);
		// Later than the allowance (10 ms here), it counts when it goes.
		const stale = (await redisNowUs()) - 50_000;
		await lone.start('c', [2, 10], { first: false, place: String(stale) });
		expect(Number(await connection.redis.zscore(lone.log, 'c'))).toBeGreaterThan(stale + 40_000);

		const volley = await job(1000, 20);
		const volleyPlace = (await redisNowUs()) - 5_000;
		const claimed = await volley.start('v', [0, 20], { first: false, place: String(volleyPlace), lateMs: 60_000 });
		expect(claimedIndexes(claimed)).toHaveLength(10);
		expect(Number(await connection.redis.zscore(volley.log, 'v'))).toBeGreaterThan(volleyPlace + 4_000);
	});

	test("a claim's start keeps the start log alive; a volley taken again leaves the log while it waits", async () => {
		const { spacing, log, start, startAgain } = await job(20, 10);
		expect(claimedIndexes(await start('g', [0, 10], { volleyMs: 100 }))).toEqual([0, 1]);
		const ttl = await connection.redis.pttl(log);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(2_000);
		expect(await connection.redis.hexists(spacing, 'logRenewedAt')).toBe(1);
		// The span fills meanwhile: taken again, the volley's two starts leave it and wait for room.
		const now = await redisNowUs();
		for (let k = 0; k < 19; k++) await connection.redis.zadd(log, now, `s${k}`);
		expect((await startAgain('g', 2))[0]).toBeGreaterThan(0);
		expect(await connection.redis.zscore(log, 'g')).toBeNull();
		expect(await connection.redis.zscore(log, 'g+2')).toBeNull();
	});
});
