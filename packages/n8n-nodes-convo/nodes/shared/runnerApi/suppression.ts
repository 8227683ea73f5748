/**
 * The business's suppression list over the runner's control API (/api/suppressions): an entry's
 * sources, the add's body, the list's page, and the answers the node reads.
 */
import { z } from 'zod/v4';

import { runnerPage } from './common';

/** Where an entry of the suppression list came from. */
export const SUPPRESSION_SOURCES = ['keyword', 'operator', 'workflow', 'import'] as const;

/** POST /api/suppressions: put a phone on the list (`source` operator unless a workflow says so). */
export const addSuppressionBody = z.object({
	phone: z.string({ error: 'must be a phone number with country code' }),
	reason: z.string({ error: 'must be text' }).max(200, { error: 'may be at most 200 characters' }).optional(),
	source: z.enum(['operator', 'workflow'], { error: 'must be operator or workflow' }).optional(),
});
export type AddSuppressionBody = z.input<typeof addSuppressionBody>;

/** GET /api/suppressions: a page of the list, newest first. */
export const listSuppressionsQuery = z.object({
	limit: z.coerce.number().int().min(1).max(1000).default(100),
	offset: z.coerce.number().int().min(0).default(0),
});

/** An entry of the suppression list. */
export const suppressionEntry = z.looseObject({
	phone: z.string(),
	reason: z.string(),
	source: z.enum(SUPPRESSION_SOURCES),
	at: z.iso.datetime(),
});
export type SuppressionEntry = z.infer<typeof suppressionEntry>;

/** GET /api/suppressions/:id (the id is the phone): whether it is on the list, and its entry when it is. */
export const suppressionCheckAnswer = z.looseObject({
	phone: z.string(),
	suppressed: z.boolean(),
	entry: suppressionEntry.nullable(),
});
export type SuppressionCheckAnswer = z.infer<typeof suppressionCheckAnswer>;

/**
 * POST /api/suppressions: the entry, and whether this call added it (false: the phone was there, its first entry kept).
 */
export const addSuppressionAnswer = suppressionEntry.extend({ added: z.boolean() });
export type AddSuppressionAnswer = z.infer<typeof addSuppressionAnswer>;

/** DELETE /api/suppressions/:id: whether this call took the phone off the list. */
export const removeSuppressionAnswer = z.looseObject({ phone: z.string(), removed: z.boolean() });
export type RemoveSuppressionAnswer = z.infer<typeof removeSuppressionAnswer>;

/** GET /api/suppressions: the page the query asked for. */
export const suppressionListAnswer = runnerPage(suppressionEntry);
export type SuppressionListAnswer = z.infer<typeof suppressionListAnswer>;
