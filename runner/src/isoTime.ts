/**
 * A time the runner keeps as epoch milliseconds (a number, or Redis's text of one) as its answers
 * give it: ISO 8601, or null where there is none (absent, empty or 0).
 */
export function isoOrNull(ms: number | string | null | undefined): string | null {
	const value = Number(ms ?? 0);
	return value > 0 ? new Date(value).toISOString() : null;
}
