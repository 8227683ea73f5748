/**
 * The daily messaging limit's counting script (lua/countCustomer-2.lua) and its TypeScript door
 * (audience/budget.ts) on a real Redis, no runner process: counted customers dropping out after the
 * span, a customer counted already drawing nothing more, the limit, when the next customer can be
 * counted, and the limit's settings and errors. The times are moved with the test clock offset the script is given, so no
 * test waits out a span.
 */
import { loadConfig } from '../../runner/src/config';
import { keysFor } from '../../runner/src/keys';
import {
	budgetDays,
	countCampaignCustomer,
	countCustomer,
	NO_LIMIT_RECHECK_MS,
	phonesCounted,
	setBudget,
	showBudget,
	type BudgetContext,
} from '../../runner/src/audience/budget';
import { parseDailyLimit } from '../../runner/src/dailyLimitRule';
import { redisScript } from '../../runner/src/redisScripts';
import { uniquePrefix, useRedisConnection } from './support';

const connection = useRedisConnection();
const SPAN = 10_000;

describe('countCustomer', () => {
	const run = (keys: string[], phone: string, limit: string, offset = 0) =>
		redisScript(connection.redis, 'countCustomer')(keys, [phone, limit, SPAN, offset]) as Promise<number[]>;
	const keys = () => {
		const prefix = uniquePrefix();
		return [`${prefix}:limit`, `${prefix}:customers`];
	};

	test('without a limit, or unlimited, nothing is read or kept', async () => {
		const budget = keys();
		expect(await run(budget, '491', '')).toEqual([0]);
		await connection.redis.set(budget[0], 'unlimited');
		expect(await run(budget, '491', '3')).toEqual([0]);
		expect(await connection.redis.exists(budget[1])).toBe(0);
	});

	test('customers are counted up to the limit; one counted already draws nothing; a full budget answers when the next can be counted', async () => {
		const budget = keys();
		await connection.redis.set(budget[0], '2');
		const [counted, firstAt] = await run(budget, '491', '');
		expect(counted).toBe(1);
		expect((await run(budget, '492', '', 1000))[0]).toBe(1);
		// Counted already: nothing more is drawn, and its time is not moved.
		expect((await run(budget, '491', '', 2000))[0]).toBe(2);
		expect(Number(await connection.redis.zscore(budget[1], '491'))).toBe(firstAt);
		const [full, now, nextAt] = await run(budget, '493', '', 3000);
		expect(full).toBe(-1);
		expect(nextAt).toBe(firstAt + SPAN);
		expect(now).toBeGreaterThanOrEqual(firstAt + 3000);
		expect(await connection.redis.zcard(budget[1])).toBe(2);
		const ttl = await connection.redis.pttl(budget[1]);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(SPAN);
	});

	test('a counted customer drops out a whole span after it was counted, not a moment before', async () => {
		const budget = keys();
		const [, at] = await run(budget, '491', '1');
		// On the clock a little short of the span: still counted.
		const [refused, , nextAt] = await run(budget, '492', '1', SPAN - 500);
		expect(refused).toBe(-1);
		expect(nextAt).toBe(at + SPAN);
		// A span on: the oldest counted customer drops out (trimmed) and the new phone is counted.
		expect((await run(budget, '492', '1', SPAN))[0]).toBe(1);
		expect(await connection.redis.zrange(budget[1], 0, -1)).toEqual(['492']);
		// The phone dropped out is counted anew: the budget is full again.
		expect((await run(budget, '491', '1', SPAN))[0]).toBe(-1);
	});

	test('the default limit holds while none is set; a set limit (even lower than the customers counted) wins', async () => {
		const budget = keys();
		expect((await run(budget, '491', '2'))[0]).toBe(1);
		expect((await run(budget, '492', '2'))[0]).toBe(1);
		expect((await run(budget, '493', '2'))[0]).toBe(-1);
		await connection.redis.set(budget[0], '1');
		expect((await run(budget, '493', '5'))[0]).toBe(-1);
		expect((await run(budget, '491', '5'))[0]).toBe(2);
		await connection.redis.set(budget[0], '3');
		expect((await run(budget, '493', ''))[0]).toBe(1);
	});
});

describe('the budget door', () => {
	const contextWith = (env: NodeJS.ProcessEnv = {}): BudgetContext => ({
		redis: connection.redis,
		keys: keysFor(uniquePrefix()),
		config: loadConfig({ RUNNER_DAILY_LIMIT_MARGIN: '0s', ...env }),
	});

	test('show, set and count: used, left, when the next customer can be counted; unlimited drops the counted customers', async () => {
		const context = contextWith({ RUNNER_DAILY_LIMIT: '2' });
		expect(await showBudget(context)).toMatchObject({ limit: 2, source: 'default', used: 0, left: 2 });
		expect(await countCustomer(context, '4917000000001')).toEqual({ counted: true, isNew: true });
		expect(await countCustomer(context, '4917000000001')).toEqual({ counted: true, isNew: false });
		expect(await countCustomer(context, '4917000000002')).toEqual({ counted: true, isNew: true });
		const refused = await countCustomer(context, '4917000000003');
		expect(refused).toMatchObject({ counted: false });
		if (refused.counted) throw new Error('expected the limit reached');
		expect(refused.waitMs).toBeGreaterThan(24 * 3_600_000 - 5000);
		expect(refused.waitMs).toBeLessThanOrEqual(24 * 3_600_000);
		const view = await showBudget(context);
		expect(view).toMatchObject({ limit: 2, source: 'default', used: 2, left: 0, span_ms: 24 * 3_600_000 });
		expect(Date.parse(view.next_free_at ?? '')).toBe(refused.nextAt);
		expect(await phonesCounted(context, ['4917000000001', '4917000000003'])).toBe(1);

		expect(await setBudget(context, '3', '<limit>')).toMatchObject({ limit: 3, source: 'set', used: 2, left: 1 });
		expect(await setBudget(context, 'unlimited', '<limit>')).toMatchObject({ limit: 'unlimited', used: 0, left: null });
		expect(await connection.redis.exists(context.keys.budget.customers)).toBe(0);
		expect(await countCustomer(context, '4917000000003')).toEqual({ counted: true, isNew: false, noLimit: true });
		expect(await connection.redis.exists(context.keys.budget.customers)).toBe(0);
	});

	test("a campaign's sends take no limit for granted a second at most: a limit set by another process counts from then on, one set by the same process at once", async () => {
		const keys = keysFor(uniquePrefix());
		const config = loadConfig({});
		const sender: BudgetContext = { redis: connection.redis, keys, config };
		const otherProcess = connection.redis.duplicate();
		try {
			const operator: BudgetContext = { redis: otherProcess, keys, config };
			const noLimit = { counted: true, isNew: false, noLimit: true };
			expect(await countCampaignCustomer(sender, '4917000000011')).toEqual(noLimit);
			await setBudget(operator, 5, '<limit>');
			expect(await countCampaignCustomer(sender, '4917000000012')).toEqual(noLimit);
			expect(await showBudget(operator)).toMatchObject({ limit: 5, used: 0 });
			await new Promise((resolve) => setTimeout(resolve, NO_LIMIT_RECHECK_MS));
			expect(await countCampaignCustomer(sender, '4917000000013')).toEqual({ counted: true, isNew: true });

			await setBudget(sender, 'unlimited', '<limit>');
			expect(await countCampaignCustomer(sender, '4917000000014')).toEqual(noLimit);
			await setBudget(sender, 5, '<limit>');
			expect(await countCampaignCustomer(sender, '4917000000015')).toEqual({ counted: true, isNew: true });
			expect(await showBudget(operator)).toMatchObject({ limit: 5, used: 1 });
		} finally {
			otherProcess.disconnect();
		}
	});

	test('a wrong limit is refused naming the setting and the rule', async () => {
		const rule = 'must be a whole number of customers from 1 to 1,000,000, or unlimited';
		for (const wrong of ['0', '-1', '1000001', '2.5', 'lots', ''])
			expect(() => parseDailyLimit(wrong, 'limit')).toThrow(`limit ${rule}`);
		expect(parseDailyLimit('Unlimited', 'limit')).toBe('unlimited');
		expect(parseDailyLimit('10,000', 'limit')).toBe(10_000);
		expect(parseDailyLimit(250, 'limit')).toBe(250);
		await expect(setBudget(contextWith(), 'none', '<limit>')).rejects.toThrow(`<limit> ${rule}`);
		expect(() => loadConfig({ RUNNER_DAILY_LIMIT: '0' })).toThrow(`RUNNER_DAILY_LIMIT ${rule}`);
		expect(loadConfig({ RUNNER_DAILY_LIMIT: 'unlimited' }).RUNNER_DAILY_LIMIT).toBe('unlimited');
	});

	test('a dry run reckons the days: what is left today, then the limit a day', () => {
		expect(budgetDays({ limit: 'unlimited', left: null }, 5000)).toEqual({ days: 1, firstDay: 5000, lastDay: 5000 });
		expect(budgetDays({ limit: 250, left: 250 }, 200)).toEqual({ days: 1, firstDay: 200, lastDay: 200 });
		expect(budgetDays({ limit: 250, left: 50 }, 100)).toEqual({ days: 2, firstDay: 50, lastDay: 50 });
		expect(budgetDays({ limit: 250, left: 0 }, 750)).toEqual({ days: 4, firstDay: 0, lastDay: 250 });
		expect(budgetDays({ limit: 250, left: 10 }, 751)).toEqual({ days: 4, firstDay: 10, lastDay: 241 });
		expect(budgetDays({ limit: 250, left: 0 }, 751)).toEqual({ days: 5, firstDay: 0, lastDay: 1 });
	});
});
