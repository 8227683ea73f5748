/**
 * Phone numbers as users type them ("+49 151-123 456", "0049 151 123456") and as the two APIs
 * want them: the external API (v2) takes digits with the country code and no "+"; the messaging
 * API (v1) gets the international form with a leading "+"
 * (docs/decisions/contract/phones-and-ids.md).
 */

/** E.164 allows at most 15 digits; 7 is the shortest complete international number in use. */
export const PHONE_DIGITS = { min: 7, max: 15 } as const;

export const PHONE_DIGITS_PATTERN = new RegExp(`^[0-9]{${PHONE_DIGITS.min},${PHONE_DIGITS.max}}$`);

const SEPARATORS = /[\s\-()./]/g;

/** `reason` quotes the input for the person who typed it; `rule` does not, for reports of rows read from a file. */
export type PhoneParseResult = { ok: true; digits: string } | { ok: false; reason: string; rule: string };

/** Accepts spaces, dashes, dots, slashes, brackets, and a leading "+" or "00" international prefix. */
export function parsePhoneNumber(input: string): PhoneParseResult {
	let value = input.trim().replace(SEPARATORS, '');
	if (value.startsWith('+')) value = value.slice(1);
	else if (value.startsWith('00')) value = value.slice(2);
	if (value === '') return { ok: false, reason: 'is empty', rule: 'is empty' };
	if (!/^[0-9]+$/.test(value)) {
		const rule = 'is not a phone number: only digits, spaces, dashes, brackets and a leading + are allowed';
		return { ok: false, reason: `"${input}" ${rule}`, rule };
	}
	if (value.length < PHONE_DIGITS.min || value.length > PHONE_DIGITS.max) {
		const rule =
			`has ${value.length} digits; ` +
			`a phone number with country code has ${PHONE_DIGITS.min} to ${PHONE_DIGITS.max}`;
		return { ok: false, reason: `"${input}" ${rule}`, rule };
	}
	return { ok: true, digits: value };
}

/** Digits with country code, no "+": the form of the external API (v2). */
export function toApiDigits(input: string): string | undefined {
	const parsed = parsePhoneNumber(input);
	return parsed.ok ? parsed.digits : undefined;
}
