/**
 * Every client names the settings to its user in its own way (the CLI's flags, the API's JSON
 * fields): campaigns (campaigns/schema.ts) and reindex runs (reindex/store.ts) each keep a map from
 * a setting's key in code to the client's name, and a rule broken in a schema is reported here.
 */
import type { z } from 'zod/v4';

import { FieldError } from './errors';

/** The broken rules, each with the client's name of its setting in front; the field is the first one's. */
export function settingsError(error: z.ZodError, names: Readonly<Partial<Record<string, string>>>): FieldError {
	const nameOf = (key: PropertyKey) => names[String(key)] ?? String(key);
	return new FieldError(
		error.issues.map((issue) => `${nameOf(issue.path[0])} ${issue.message}`).join('; '),
		nameOf(error.issues[0].path[0]),
	);
}
