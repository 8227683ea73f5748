/**
 * The business's daily messaging budget over the runner's control API (/api/budget): the limit in
 * force with the customers counted and left, the body that sets it, and the customer of one send
 * counted (the Convo node's Message → Send and Template → Send, when they draw on the budget).
 */
import { z } from 'zod/v4';

import { count } from './common';

/** PUT /api/budget: the limit, a whole number of distinct customers a rolling 24 hours, or `unlimited`. */
export const setBudgetBody = z.object({
	limit: z.union([z.number(), z.string()], { error: 'must be a whole number of customers or "unlimited"' }),
});
export type SetBudgetBody = z.input<typeof setBudgetBody>;

/** GET, PUT and DELETE /api/budget: the limit in force, where it comes from, and the customers counted. */
export const budgetAnswer = z.looseObject({
	limit: z.union([count, z.literal('unlimited')]),
	source: z.enum(['set', 'default', 'none']),
	used: count,
	/** Null when unlimited. */
	left: count.nullable(),
	/** When the next customer can be counted, once the limit is reached; null otherwise. */
	next_free_at: z.iso.datetime().nullable(),
	/** How long a customer stays counted: 24 hours and a safety margin. */
	span_ms: count,
});
export type BudgetAnswer = z.infer<typeof budgetAnswer>;

/** POST /api/budget/customers: counts the customer of one send to `phone` (digits with country code). */
export const countBudgetCustomerBody = z.object({
	phone: z.string({ error: 'must be a phone number with country code' }),
});
export type CountBudgetCustomerBody = z.input<typeof countBudgetCustomerBody>;

/**
 * The count: `counted` (the send may go; `new_customer`: false when the customer was counted
 * already or no limit is set), or not before `next_at`.
 */
export const budgetCountAnswer = z.looseObject({
	phone: z.string(),
	counted: z.boolean(),
	new_customer: z.boolean(),
	next_at: z.iso.datetime().nullable(),
});
export type BudgetCountAnswer = z.infer<typeof budgetCountAnswer>;
