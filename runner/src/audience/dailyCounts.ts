/**
 * A sending number's daily counts: how many recipients its campaigns sent (the service accepted)
 * and how many the service refused, per day (UTC), the last DAILY_DAYS days. The settle counts
 * them in the same step as the recipient's outcome (lua/includes/settleRecord.lua countDaily), so
 * a count is never lost nor made twice; a send whose outcome was unknown and that reconcile later
 * finds sent is not counted (it had no day of its own).
 */
import type { Keys } from '../keys';
import type { RedisConnection } from '../redis';

/** Days kept and shown: today and the seven before (DAILY_DAYS in settleRecord.lua). */
const DAILY_DAYS = 8;
const DAY_MS = 86_400_000;

interface DailyContext {
	redis: RedisConnection;
	keys: Keys;
}

interface DayCounts {
	/** YYYY-MM-DD, UTC. */
	date: string;
	sent: number;
	failed: number;
}

export interface DailyCountsView {
	from: string;
	/** Newest first, every one of the DAILY_DAYS days, zeros included. */
	days: DayCounts[];
}

export async function dailyCountsOf(context: DailyContext, from: string, now = Date.now()): Promise<DailyCountsView> {
	const stored = await context.redis.hgetall(context.keys.dailyCounts(from));
	const today = Math.floor(now / DAY_MS);
	const days: DayCounts[] = [];
	for (let day = today; day > today - DAILY_DAYS; day--) {
		days.push({
			date: new Date(day * DAY_MS).toISOString().slice(0, 10),
			sent: Number(stored[`${day}:s`] ?? 0),
			failed: Number(stored[`${day}:f`] ?? 0),
		});
	}
	return { from, days };
}
