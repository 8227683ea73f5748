import type { IDataObject } from 'n8n-workflow';

import { toApiDigits, WEBHOOK_MESSAGE_STATUSES } from '../shared';

/** The "Trigger On" choice: a webhook status, or any of the documented ones. */
export type TriggerOn = 'received' | 'sent' | 'any';

export interface TriggerFilters {
	triggerOn: TriggerOn;
	/** Lower-case channel names; empty = every channel. */
	channels: string[];
	/** Business numbers as digits; API sends from them are dropped. */
	ignoreSendsFrom: string[];
}

/** Splits a comma-separated parameter into its non-empty, trimmed parts. */
export function splitList(value: string): string[] {
	return value
		.split(',')
		.map((part) => part.trim())
		.filter((part) => part !== '');
}

/** Digits when it reads as a phone number, else the trimmed text, so both sides compare alike. */
export function normalizeNumber(value: string): string {
	return toApiDigits(value) ?? value.trim();
}

/** Why the delivery starts no execution, or undefined when it passes every filter. */
export function ignoredBecause(payload: IDataObject, filters: TriggerFilters): string | undefined {
	const status = String(payload.status);
	// "any" means the two documented statuses; an undocumented one is not guessed at.
	const wanted: readonly string[] = filters.triggerOn === 'any' ? WEBHOOK_MESSAGE_STATUSES : [filters.triggerOn];
	if (!wanted.includes(status)) return `message status "${status}" is not chosen in Trigger On`;

	const channel = String(payload.channel).toLowerCase();
	if (filters.channels.length > 0 && !filters.channels.includes(channel)) {
		return `channel "${channel}" is not selected`;
	}

	// Only API sends carry status "sent" (dashboard sends fire no event), and their sender is the
	// business number the send used.
	if (status === 'sent' && filters.ignoreSendsFrom.length > 0) {
		const from = normalizeNumber(String(payload.from));
		if (filters.ignoreSendsFrom.includes(from)) return 'sent through the API from an ignored business number';
	}
	return undefined;
}
