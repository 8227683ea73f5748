/**
 * A frequency cap policy as users write it (`1/24h,3/7d`), parsed and checked once for the
 * environment (config.ts), the CLI and the API. Below config.ts and audience/, which both read it;
 * its encoding for the claim's script is audience/capPolicy.ts.
 */
import { FieldError } from './errors';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** Enough for any policy written by hand; a rule's count bounds the times kept per phone. */
const MAX_RULES = 5;
const MAX_COUNT = 100;
const MAX_WINDOW_MS = 366 * UNIT_MS.d;

export interface CapRule {
	/** As the policy says it: `1/24h`. */
	label: string;
	count: number;
	windowMs: number;
}

/** A policy that says "no cap" for a number, even where the business default has one. */
export const NO_CAP = 'none';

/**
 * `1/24h,3/7d`: at most `count` per window, for every rule; `none` for no cap. Throws a FieldError
 * naming `setting` (a CLI flag, an API field, an environment variable) and the rule broken.
 */
export function parseCapPolicy(text: string, setting: string): CapRule[] {
	const trimmed = text.trim();
	if (trimmed.toLowerCase() === NO_CAP) return [];
	const shape = `like 1/24h or 1/24h,3/7d (at most N per window; units s, m, h, d), or ${NO_CAP}`;
	const parts = trimmed.split(',').map((part) => part.trim());
	if (trimmed === '' || parts.length > MAX_RULES)
		throw new FieldError(`${setting} must be 1 to ${MAX_RULES} rules ${shape}`, setting);
	const rules = parts.map((part, i) => {
		const match = /^(\d+)\/(\d+)([smhd])$/.exec(part);
		if (!match) throw new FieldError(`${setting}: rule ${i + 1} must be ${shape}`, setting);
		const count = Number(match[1]);
		const windowMs = Number(match[2]) * UNIT_MS[match[3] as keyof typeof UNIT_MS];
		if (count < 1 || count > MAX_COUNT)
			throw new FieldError(`${setting}: rule ${i + 1} must allow 1 to ${MAX_COUNT} messages per window`, setting);
		if (windowMs < 1000 || windowMs > MAX_WINDOW_MS)
			throw new FieldError(`${setting}: rule ${i + 1} must have a window of 1s to 366d`, setting);
		return { label: `${count}/${match[2]}${match[3]}`, count, windowMs };
	});
	if (new Set(rules.map((rule) => rule.windowMs)).size !== rules.length)
		throw new FieldError(`${setting} has two rules with the same window: keep one per window`, setting);
	return rules;
}
