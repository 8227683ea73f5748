/**
 * The business's daily messaging budget: the channel lets a business start conversations with at
 * most N distinct customers in a rolling 24 hours (250, 2,000, 10,000, 100,000 or unlimited), across
 * all its numbers. Every campaign and schedule firing draws from one budget here: the limit the operator
 * set (`budget set`, PUT /api/budget), else RUNNER_DAILY_LIMIT, else none.
 *
 * The budget counts customers: a sorted set of phone -> the time it was counted, in a key group of
 * its own ({budget}, keys.ts): it spans numbers, and a send's claim runs in its number's slot, so a
 * send counts its customer by its own script right after its claim and before it goes out
 * (docs/decisions/audience/daily-limit-after-the-claim.md). A customer counted already draws nothing
 * more; a counted customer drops out a span (24 h and RUNNER_DAILY_LIMIT_MARGIN) after it was
 * counted, on Redis's clock plus a test's offset. Without a limit nothing is kept, and a process's
 * campaign sends ask at most once a second (NO_LIMIT_RECHECK_MS).
 *
 * A process that dies between the count and the send leaves a customer counted and never messaged:
 * the budget then counts one more than the service does, never one less.
 */
import type { RunnerConfig } from '../config';
import type { Keys } from '../keys';
import type { RedisConnection } from '../redis';
import { redisScript } from '../redisScripts';
import { parseDailyLimit, UNLIMITED, type DailyLimit } from '../dailyLimitRule';

export { UNLIMITED } from '../dailyLimitRule';

/** What the budget's functions use of a RunnerContext. */
export interface BudgetContext {
	redis: RedisConnection;
	keys: Keys;
	config: RunnerConfig;
}

const DAY_MS = 24 * 3_600_000;

/** How long a customer stays counted (the span): the channel's 24 hours and the safety margin. */
const budgetSpanMs = (config: RunnerConfig) => DAY_MS + config.RUNNER_DAILY_LIMIT_MARGIN;

/** The budget's clock: Redis's, plus a test's offset (RUNNER_TEST_CLOCK_OFFSET_MS). */
async function budgetNow(context: BudgetContext): Promise<number> {
	const [seconds, micros] = await context.redis.time();
	return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + context.config.RUNNER_TEST_CLOCK_OFFSET_MS;
}

/**
 * A send's answer from the budget: it may go (`isNew`: its customer was not counted before), or not
 * before `nextAt`.
 */
export type BudgetCount =
	| { counted: true; isNew: boolean; noLimit?: true }
	| { counted: false; nextAt: number; waitMs: number };

/**
 * Counts the customer of a send to `phone` (digits): the core of the daily limit, for a campaign's
 * send and for any other send of the business's (a workflow's template send). Counted (now or
 * already, or no limit) the send may go; otherwise `nextAt` is when the next customer can be
 * counted (ms on the budget's clock) and `waitMs` how long that is from now.
 */
export async function countCustomer(context: BudgetContext, phone: string): Promise<BudgetCount> {
	const count = redisScript(context.redis, 'countCustomer');
	const { keys, config } = context;
	const reply = (await count(
		[keys.budget.limit, keys.budget.customers],
		[phone, config.RUNNER_DAILY_LIMIT ?? '', budgetSpanMs(config), config.RUNNER_TEST_CLOCK_OFFSET_MS],
	)) as number[];
	const [answer, now, nextAt] = reply.map(Number);
	if (answer === 0) return { counted: true, isNew: false, noLimit: true };
	if (answer > 0) return { counted: true, isNew: answer === 1 };
	return { counted: false, nextAt, waitMs: Math.max(0, nextAt - now) };
}

/**
 * How long a process sending campaigns takes "no limit" for granted once the budget said so: at
 * 1,000 sends a second each would otherwise pay a script call and a round trip to Redis, between
 * its claim and its send, for nothing. A limit set meanwhile applies to this process's sends from
 * at most this long after (a limit set mid-day starts from an empty budget all the same).
 */
export const NO_LIMIT_RECHECK_MS = 1000;

/** Per connection (one per process): until when this process takes "no limit" for granted. */
const noLimitUntil = new WeakMap<RedisConnection, number>();

/**
 * countCustomer for a campaign's sends: with no limit in force, asked again at most every
 * NO_LIMIT_RECHECK_MS. A limit set or cleared through this process applies to its next send.
 */
export async function countCampaignCustomer(context: BudgetContext, phone: string): Promise<BudgetCount> {
	if (performance.now() < (noLimitUntil.get(context.redis) ?? 0)) return { counted: true, isNew: false, noLimit: true };
	const counted = await countCustomer(context, phone);
	if (counted.counted && counted.noLimit) noLimitUntil.set(context.redis, performance.now() + NO_LIMIT_RECHECK_MS);
	return counted;
}

export interface BudgetView {
	/** The limit in force: the one set, else the default, else unlimited. */
	limit: DailyLimit;
	source: 'set' | 'default' | 'none';
	/** Distinct customers messaged within the span (0 without a limit: nothing is counted). */
	used: number;
	/** How many more customers can be counted now; null when unlimited. */
	left: number | null;
	/** When the next customer can be counted (ISO), when none can now; null otherwise. */
	next_free_at: string | null;
	/** How long a customer stays counted, ms: 24 h and the safety margin. */
	span_ms: number;
}

/** The limit in force and where it comes from. */
async function limitInForce(context: BudgetContext): Promise<{ limit: DailyLimit; source: BudgetView['source'] }> {
	const stored = await context.redis.get(context.keys.budget.limit);
	if (stored !== null) return { limit: stored === UNLIMITED ? UNLIMITED : Number(stored), source: 'set' };
	const fallback = context.config.RUNNER_DAILY_LIMIT;
	if (fallback !== undefined) return { limit: parseDailyLimit(fallback, 'RUNNER_DAILY_LIMIT'), source: 'default' };
	return { limit: UNLIMITED, source: 'none' };
}

/** The budget now: its limit, the customers counted and left (read only: nothing is dropped here). */
export async function showBudget(context: BudgetContext): Promise<BudgetView> {
	const { limit, source } = await limitInForce(context);
	const span_ms = budgetSpanMs(context.config);
	if (limit === UNLIMITED) return { limit, source, used: 0, left: null, next_free_at: null, span_ms };
	const now = await budgetNow(context);
	const customers = context.keys.budget.customers;
	const [used, oldest] = await Promise.all([
		context.redis.zcount(customers, `(${now - span_ms}`, '+inf'),
		context.redis.zrangebyscore(customers, `(${now - span_ms}`, '+inf', 'WITHSCORES', 'LIMIT', 0, 1),
	]);
	const left = Math.max(0, limit - used);
	const next_free_at = left === 0 && oldest.length === 2 ? new Date(Number(oldest[1]) + span_ms).toISOString() : null;
	return { limit, source, used, left, next_free_at, span_ms };
}

/**
 * Sets the business's limit (`setting`: how the caller names it, for the error); it holds from the
 * next send. `unlimited` drops the counted customers: nothing is kept without a limit, and a limit
 * set later counts from then on.
 */
export async function setBudget(context: BudgetContext, value: string | number, setting: string): Promise<BudgetView> {
	const limit = parseDailyLimit(value, setting);
	const { keys } = context;
	noLimitUntil.delete(context.redis);
	if (limit === UNLIMITED)
		await context.redis.multi().set(keys.budget.limit, UNLIMITED).del(keys.budget.customers).exec();
	else await context.redis.set(keys.budget.limit, String(limit));
	return showBudget(context);
}

/** Forgets the limit set: RUNNER_DAILY_LIMIT holds again, or none. */
export async function clearBudget(context: BudgetContext): Promise<BudgetView> {
	noLimitUntil.delete(context.redis);
	await context.redis.del(context.keys.budget.limit);
	return showBudget(context);
}

/**
 * Refusals of a campaign closer than this are one wait: twice the recheck time (a waiting job looks
 * again within it), and at least a minute, so a loaded process's late wake-up is not a new wait.
 */
const sameWaitMs = (config: RunnerConfig) => Math.max(60_000, 2 * config.RUNNER_DAILY_LIMIT_RECHECK);

/**
 * A campaign's send could not count its customer (`refused`): the campaign records when the next
 * customer can be counted, and a wait that begins emits campaign.waiting once
 * (lua/noteBudgetWait-2.lua); true when it began.
 */
export async function noteBudgetWait(
	context: BudgetContext,
	send: { from: string; campaign: string },
	refused: { nextAt: number; waitMs: number },
): Promise<boolean> {
	const note = redisScript(context.redis, 'noteBudgetWait');
	const { keys, config } = context;
	const began = await note(
		[keys.campaign(send.from, send.campaign), keys.outbox(send.from)],
		[send.campaign, refused.nextAt, refused.nextAt - refused.waitMs, sameWaitMs(config), Date.now()],
	);
	return Number(began) === 1;
}

/** For a dry run: how many of these phones are counted now (they draw nothing more). */
export async function phonesCounted(context: BudgetContext, phones: string[]): Promise<number> {
	if (phones.length === 0) return 0;
	const since = (await budgetNow(context)) - budgetSpanMs(context.config);
	const scores = (await context.redis.zmscore(context.keys.budget.customers, ...phones)) as Array<string | null>;
	return scores.filter((score) => score !== null && Number(score) > since).length;
}

/**
 * A dry run's reckoning of the budget for a campaign of `drawing` recipients that would be counted
 * anew (the others are counted already): how many go out on the first day (what is left now), and
 * how many days the campaign takes, `limit` more each day after. Unlimited: one day, all of them.
 */
export function budgetDays(
	budget: Pick<BudgetView, 'limit' | 'left'>,
	drawing: number,
): { days: number; firstDay: number; lastDay: number } {
	if (budget.limit === UNLIMITED || budget.left === null || drawing <= budget.left)
		return { days: 1, firstDay: drawing, lastDay: drawing };
	const later = drawing - budget.left;
	const days = 1 + Math.ceil(later / budget.limit);
	return { days, firstDay: budget.left, lastDay: later - (days - 2) * budget.limit };
}
