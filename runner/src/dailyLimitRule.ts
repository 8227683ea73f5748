/**
 * The business's daily messaging limit as users write it: a whole number of distinct customers per
 * rolling 24 hours, or `unlimited`; parsed and checked once for the environment (config.ts), the
 * CLI and the API. Below config.ts and audience/budget.ts, which both read it.
 */
import { FieldError } from './errors';

/** The channel's unlimited tier: no budget is kept. */
export const UNLIMITED = 'unlimited';
/** The largest limit taken: the channel's highest numbered tier is 100,000; the budget's set stays bounded by it. */
const MAX_DAILY_LIMIT = 1_000_000;

export type DailyLimit = number | typeof UNLIMITED;

/** Throws a FieldError naming `setting` (a CLI argument, an API field, an environment variable) and the rule. */
export function parseDailyLimit(value: string | number, setting: string): DailyLimit {
	const text = String(value).trim();
	if (text.toLowerCase() === UNLIMITED) return UNLIMITED;
	const limit = /^\d+$/.test(text.replace(/[_,]/g, '')) ? Number(text.replace(/[_,]/g, '')) : NaN;
	if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DAILY_LIMIT)
		throw new FieldError(
			`${setting} must be a whole number of customers from 1 to ${MAX_DAILY_LIMIT.toLocaleString('en-US')}, ` +
				`or ${UNLIMITED}`,
			setting,
		);
	return limit;
}
