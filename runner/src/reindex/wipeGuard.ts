/**
 * The wipe guard of --deactivate-missing: a feed that suddenly lacks most of its items (an empty
 * export, the wrong file) must not deactivate most of the collection. Before deactivating anything
 * a run counts what it would deactivate; above its limit (by default 10% of the collection's
 * active items) it deactivates nothing and fails, unless it was told to go ahead.
 */
import type { ReindexNames } from './names';

/** A share of the collection's active items, or a number of items. */
export type DeactivateLimit = { percent: number } | { count: number };

export const DEFAULT_MAX_DEACTIVATE: DeactivateLimit = { percent: 10 };

/** The rule, as every client's error states it after the setting's name. */
export const LIMIT_RULE =
	"must be a share of the collection's active items such as 10% (0% to 100%), " +
	'or a number of items such as 50 (a whole number, 0 or more)';

/** `10%`, `2.5%` or `50`; undefined when the text is neither. */
export function parseLimit(text: string | number): DeactivateLimit | undefined {
	if (typeof text === 'number') return Number.isSafeInteger(text) && text >= 0 ? { count: text } : undefined;
	const trimmed = text.trim();
	const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(trimmed);
	if (percent) {
		const value = Number(percent[1]);
		return value <= 100 ? { percent: value } : undefined;
	}
	if (!/^\d+$/.test(trimmed)) return undefined;
	const count = Number(trimmed);
	return Number.isSafeInteger(count) ? { count } : undefined;
}

export function limitText(limit: DeactivateLimit): string {
	return 'percent' in limit ? `${limit.percent}%` : String(limit.count);
}

export interface GuardVerdict {
	/** The run may deactivate the items it counted. */
	passes: boolean;
	/** The sentence a report, an error and an event show. */
	text: string;
}

const number = (value: number) => value.toLocaleString('en-US');
const share = (part: number, whole: number) => `${whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10}%`;

/**
 * Whether deactivating `missing` of the collection's `active` items is within the run's limit
 * ("more than" the limit stops, the limit itself passes); named as the run's client calls things.
 */
export function judgeDeactivation(
	missing: number,
	active: number,
	run: { maxDeactivate: DeactivateLimit; forceDeactivate: boolean },
	names: ReindexNames,
): GuardVerdict {
	const what = `${number(missing)} of ${number(active)} active items (${share(missing, active)})`;
	if (run.forceDeactivate) return { passes: true, text: `deactivates ${what}: ${names.forceDeactivate} was given` };
	const limit = run.maxDeactivate;
	const over = 'percent' in limit ? missing * 100 > limit.percent * active : missing > limit.count;
	const allowed = 'percent' in limit ? `${limit.percent}%` : number(limit.count);
	if (!over)
		return { passes: true, text: `deactivates ${what}, within the ${allowed} allowed (${names.maxDeactivate})` };
	return {
		passes: false,
		text:
			`would deactivate ${what}, more than the ${allowed} allowed (${names.maxDeactivate}); nothing was deactivated; ` +
			`run again with ${names.forceDeactivate} if the feed is right, or give a higher ${names.maxDeactivate}`,
	};
}
