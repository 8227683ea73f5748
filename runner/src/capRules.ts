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
const MAX_PERIOD_MS = 366 * UNIT_MS.d;

export interface CapRule {
	/** As the policy says it: `1/24h`. */
	label: string;
	count: number;
	periodMs: number;
}

/** A policy that says "no cap" for a number, even where the business default has one. */
export const NO_CAP = 'none';

/**
 * `1/24h,3/7d`: at most `count` per period, for every rule; `none` for no cap. Throws a FieldError
 * naming `setting` (a CLI flag, an API field, an environment variable) and the rule broken.
 */
export function parseCapPolicy(text: string, setting: string): CapRule[] {
	const trimmed = text.trim();
	if (trimmed.toLowerCase() === NO_CAP) return [];
	const shape = `like 1/24h or 1/24h,3/7d (at most N per period; units s, m, h, d), or ${NO_CAP}`;
	const parts = trimmed.split(',').map((part) => part.trim());
	if (trimmed === '' || parts.length > MAX_RULES)
		throw new FieldError(`${setting} must be 1 to ${MAX_RULES} rules ${shape}`, setting);
	const rules = parts.map((part, i) => {
		const match = /^(\d+)\/(\d+)([smhd])$/.exec(part);
		if (!match) throw new FieldError(`${setting}: rule ${i + 1} must be ${shape}`, setting);
		const count = Number(match[1]);
		const periodMs = Number(match[2]) * UNIT_MS[match[3] as keyof typeof UNIT_MS];
		if (count < 1 || count > MAX_COUNT)
			throw new FieldError(`${setting}: rule ${i + 1} must allow 1 to ${MAX_COUNT} messages per period`, setting);
		if (periodMs < 1000 || periodMs > MAX_PERIOD_MS)
			throw new FieldError(`${setting}: rule ${i + 1} must have a period of 1s to 366d`, setting);
		return { label: `${count}/${match[2]}${match[3]}`, count, periodMs };
	});
	if (new Set(rules.map((rule) => rule.periodMs)).size !== rules.length)
		throw new FieldError(`${setting} has two rules with the same period: keep one per period`, setting);
	return rules;
}
