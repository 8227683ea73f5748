import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { parsePhoneNumber } from '../../shared';

/**
 * One label for the business's own sending number wherever the node asks for it (Template → Send, Campaign → Create).
 */
export const BUSINESS_NUMBER_LABEL = 'Business Number';

/**
 * Digits with country code, no "+", from a number as a user typed it ("+49 151-123 456").
 * A value that cannot be a phone number fails the item here, before anything is sent. A field
 * read once for all items (Campaign → Create's Business Number) passes no item index: its error
 * is no item's fault, so n8n shows it without "[item 0]".
 */
export function phoneDigits(
	this: IExecuteFunctions,
	value: unknown,
	fieldName: string,
	itemIndex: number | undefined,
): string {
	const parsed = parsePhoneNumber(String(value ?? ''));
	if (!parsed.ok) {
		throw new NodeOperationError(this.getNode(), `${fieldName} ${parsed.reason}`, {
			itemIndex,
			description: 'Nothing was sent. Give the number with its country code, e.g. +49 151 12345678.',
		});
	}
	return parsed.digits;
}

/** "+" and digits: the recipient form of the messaging API (v1). */
export function phoneInternational(
	this: IExecuteFunctions,
	value: unknown,
	fieldName: string,
	itemIndex: number,
): string {
	return `+${phoneDigits.call(this, value, fieldName, itemIndex)}`;
}
