/**
 * What the runner API's resources share: the `:id` of a route, the rule of every rate, and the
 * parts of answers (counts, a page of a list).
 */
import { z } from 'zod/v4';

import { RATE_BOUNDS, RUNNER_ID_PATTERN } from '../runnerRoutes';

/** The `:id` of a route; `what` names the thing in the error ("must be a campaign id"). */
export const runnerIdParams = (what: string) =>
	z.object({ id: z.string().regex(RUNNER_ID_PATTERN, { error: `must be a ${what} id` }) });

/**
 * Sends or upserts per second: a whole number within RATE_BOUNDS, the one rule of every rate a
 * client sets (the API's bodies, the runner's CLI). The messages say the rule; whoever reports one
 * puts the setting's name in front, as the client calls it (`rate`, `--rate`). `fromText`: a query
 * string's text is read as a number first.
 */
export const runnerRate = (unit: 'send' | 'upsert', { fromText = false } = {}) =>
	(fromText ? z.coerce.number({ error: 'must be a number' }) : z.number({ error: 'must be a number' }))
		.int({ error: `must be a whole number of ${unit}s per second` })
		.min(RATE_BOUNDS.min, { error: `must be at least ${RATE_BOUNDS.min} ${unit} per second` })
		.max(RATE_BOUNDS.max, { error: `may be at most ${RATE_BOUNDS.max} ${unit}s per second` });

/** A count in an answer. */
export const count = z.int().min(0);

/** A page of a list the runner answers (GET /api/campaigns, GET /api/suppressions): `items`, newest first. */
export const runnerPage = <Item extends z.ZodType>(item: Item) =>
	z.looseObject({ items: z.array(item), total: count, limit: count, offset: count });
