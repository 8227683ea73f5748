/**
 * The business's daily messaging budget over the runner's control API (/api/budget): the limit in
 * force with its places used and left, the body that sets it, and a place taken for one send (the
 * Convo node's Message → Send and Template → Send, when they draw on the budget).
 */
import { z } from 'zod/v4';

import { count } from './common';

/** PUT /api/budget: the limit, a whole number of distinct customers a rolling 24 hours, or `unlimited`. */
export const setBudgetBody = z.object({
	limit: z.union([z.number(), z.string()], { error: 'must be a whole number of customers or "unlimited"' }),
});
export type SetBudgetBody = z.input<typeof setBudgetBody>;

/** GET, PUT and DELETE /api/budget: the limit in force, where it comes from, and its places. */
export const budgetAnswer = z.looseObject({
	limit: z.union([count, z.literal('unlimited')]),
	source: z.enum(['set', 'default', 'none']),
	used: count,
	/** Null when unlimited. */
	left: count.nullable(),
	/** When the oldest place frees, once every place is taken; null otherwise. */
	next_free_at: z.iso.datetime().nullable(),
	/** How long a customer stays counted: 24 hours and a safety margin. */
	span_ms: count,
});
export type BudgetAnswer = z.infer<typeof budgetAnswer>;

/** POST /api/budget/places: a place for one send to `phone` (digits with country code). */
export const takeBudgetPlaceBody = z.object({ phone: z.string({ error: 'must be a phone number with country code' }) });
export type TakeBudgetPlaceBody = z.input<typeof takeBudgetPlaceBody>;

/**
 * The place: `taken` (the send may go; `drew`: it took a new place, false when the phone held one
 * already or no limit is set), or not before `next_at`.
 */
export const budgetPlaceAnswer = z.looseObject({
	phone: z.string(),
	taken: z.boolean(),
	drew: z.boolean(),
	next_at: z.iso.datetime().nullable(),
});
export type BudgetPlaceAnswer = z.infer<typeof budgetPlaceAnswer>;
