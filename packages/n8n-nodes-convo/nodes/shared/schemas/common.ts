import { z } from 'zod/v4';

import { PHONE_DIGITS, PHONE_DIGITS_PATTERN } from '../phone';

/**
 * Any 8-4-4-4-12 hex identifier: the service's UUIDs are not promised to carry an RFC version.
 * The pattern is also the editor's check of identifier fields, so both refuse the same values.
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const uuid = () =>
	z.string().regex(new RegExp(UUID_PATTERN), { error: 'must be a UUID (8-4-4-4-12 hex digits)' });

export const nonEmptyString = () => z.string().min(1);

export const email = () => z.email({ error: 'must be an email address' });

const PHONE_DIGITS_RULE =
	`${PHONE_DIGITS.min} to ${PHONE_DIGITS.max} digits ` + 'with country code and no "+" (e.g. 4915112345678)';

/** Digits with country code, no "+": what the external API (v2) takes. */
export const phoneDigits = () =>
	z.string().regex(PHONE_DIGITS_PATTERN, {
		error: (issue) => {
			const input = String(issue.input);
			if (input.startsWith('+')) return `must not start with "+": send ${PHONE_DIGITS_RULE}`;
			// In a URL query an unencoded "+" reads as a space.
			if (/^ \d/.test(input))
				return `starts with a space, which is how a "+" in a URL query arrives: send ${PHONE_DIGITS_RULE}`;
			return `must be ${PHONE_DIGITS_RULE}`;
		},
	});

export const isoTimestamp = () => z.string().min(1);

/** A JSON object whose inner shape the spec leaves open. */
export const jsonObject = () => z.record(z.string(), z.unknown());

/** A bounded integer with a documented maximum; the message carries the limit. */
export const boundedInt = (max: number) =>
	z
		.int({ error: 'must be an integer' })
		.min(1, { error: 'must be at least 1' })
		.max(max, { error: (issue) => `is ${String(issue.input)}; at most ${max}` });

export const noParams = z.object({});
export const noBody = z.undefined();
