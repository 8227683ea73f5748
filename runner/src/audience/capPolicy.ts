/**
 * A frequency cap policy as the claim's script reads it (audience/cap.ts), encoded from the rules
 * capRules.ts parses, and shown back as users write it.
 */
import { NO_CAP, type CapRule } from '../capRules';

/** The policy as the scripts read it: `label:count:periodMs,...`, or `none`. */
export function encodeCapPolicy(rules: CapRule[]): string {
	return rules.length === 0 ? NO_CAP : rules.map((rule) => `${rule.label}:${rule.count}:${rule.periodMs}`).join(',');
}

/** The policy as a user writes it (what `cap show` answers). */
export function shownPolicy(encoded: string): string {
	return encoded === NO_CAP
		? NO_CAP
		: encoded
				.split(',')
				.map((rule) => rule.split(':')[0])
				.join(',');
}
