/**
 * The audience door: who a campaign may reach. The suppression list (phones never sent a marketing
 * campaign), each sending number's frequency cap, and the business's daily messaging limit. Clients
 * (http/, cli/) reach a domain only through its door in core/ (eslint.config.mjs).
 */
import type { RunnerContext } from '../context';
import { FieldError, UserError } from '../errors';
import { readRecords, SourceError, type SourceRecord } from '../source';
import { csvRows } from '../csv';
import { campaignSettings } from '../campaigns/schema';
import { dailyCountsOf, type DailyCountsView } from '../audience/dailyCounts';
import { clearCap as clearCapOf, setCap as setCapOf, showCap as showCapOf, type CapView } from '../audience/cap';
import {
	clearBudget as clearBudgetOf,
	setBudget as setBudgetOf,
	showBudget as showBudgetOf,
	countCustomer as countCustomerOf,
	type BudgetCount,
	type BudgetView,
} from '../audience/budget';
import {
	allSuppressions,
	findSuppression,
	importSuppressions,
	phoneOf,
	suppress,
	unsuppress,
	type SuppressionEntry,
} from '../audience/suppression';

export { pageSuppressions, type SuppressionEntry } from '../audience/suppression';
export type { BudgetCount, BudgetView } from '../audience/budget';

/**
 * Puts a phone on the suppression list (an operator's or a workflow's); `field` names the phone as
 * the client does (`<phone>`, `phone`).
 */
export async function addSuppression(
	context: RunnerContext,
	input: { phone: string; reason?: string; source: 'operator' | 'workflow' },
	field: string,
) {
	const entry = await suppress(context, phoneOf(input.phone, field), { source: input.source, reason: input.reason });
	context.log.info({ source: entry.source, added: entry.added }, 'suppression list: a phone added');
	return entry;
}

/** Takes a phone off the suppression list: `removed` false when it was not on it. */
export async function removeSuppression(
	context: RunnerContext,
	phone: string,
	field: string,
): Promise<{ phone: string; removed: boolean }> {
	const digits = phoneOf(phone, field);
	const removed = await unsuppress(context, digits);
	context.log.info({ removed }, 'suppression list: a phone removed');
	return { phone: digits, removed };
}

/** Whether a phone is on the suppression list, with its entry. */
export async function checkSuppression(
	context: RunnerContext,
	phone: string,
	field: string,
): Promise<{ phone: string; suppressed: boolean; entry: SuppressionEntry | null }> {
	const digits = phoneOf(phone, field);
	const entry = await findSuppression(context, digits);
	return { phone: digits, suppressed: entry !== undefined, entry: entry ?? null };
}

/** What an import stopped midway has done: its rows are written a batch at a time as they are read. */
export const IMPORT_STOPPED = 'the import stopped there (rows read before it may already be on the list)';

/**
 * Imports rows into the suppression list. A source that cannot be read to its end (empty, binary,
 * broken CSV, unreadable) is the user's error, its message naming the problem (and its line) and
 * what was imported.
 */
export async function importSuppressionRecords(context: RunnerContext, records: AsyncIterable<SourceRecord>) {
	let anyRead = false;
	async function* noted() {
		for await (const record of records) {
			anyRead = true;
			yield record;
		}
	}
	try {
		return await importSuppressions(context, noted());
	} catch (error) {
		if (error instanceof SourceError)
			throw new UserError(`${error.message}; ${anyRead ? IMPORT_STOPPED : 'nothing was imported'}`);
		throw error;
	}
}

/**
 * Imports a CSV file (a path, or an http(s) URL the runner may
 * read) into the suppression list: core's import of its rows.
 */
export function importSuppressionFile(context: RunnerContext, source: string) {
	return importSuppressionRecords(context, readRecords(source, 'csv', undefined, undefined, context.config));
}

/** The columns of an export (and what an import reads: phone, and reason when present). */
const SUPPRESSION_COLUMNS = ['phone', 'reason', 'source', 'at'] as const;

/** The whole list as CSV text chunks (phone,reason,source,at), oldest first, a page at a time. */
export async function* suppressionCsv(context: RunnerContext): AsyncGenerator<string> {
	yield csvRows([[...SUPPRESSION_COLUMNS]]);
	for await (const entry of allSuppressions(context))
		yield csvRows([SUPPRESSION_COLUMNS.map((column) => entry[column])]);
}

/**
 * The frequency cap of a sending number (audience/cap.ts): what holds for it (its own policy, else
 * the business default RUNNER_FREQUENCY_CAP, else none), set, and cleared. `names`: how the client
 * calls the number and the policy, for its errors.
 */
export async function showCap(context: RunnerContext, from: string, names: CapNames = CAP_CLI_NAMES): Promise<CapView> {
	return showCapOf(context, checkedNumber(from, names.from));
}
export async function setCap(
	context: RunnerContext,
	from: string,
	policy: string,
	names: CapNames = CAP_CLI_NAMES,
): Promise<CapView> {
	const view = await setCapOf(context, checkedNumber(from, names.from), policy, names.policy);
	context.log.info({ from: view.from, policy: view.policy }, 'frequency cap set');
	return view;
}
export async function clearCap(
	context: RunnerContext,
	from: string,
	names: CapNames = CAP_CLI_NAMES,
): Promise<CapView> {
	return clearCapOf(context, checkedNumber(from, names.from));
}
/** A sending number's sends and refusals per day, the last 8 days (audience/dailyCounts.ts). */
export async function dailyCounts(
	context: RunnerContext,
	from: string,
	names: Pick<CapNames, 'from'> = CAP_CLI_NAMES,
): Promise<DailyCountsView> {
	return dailyCountsOf(context, checkedNumber(from, names.from));
}
export interface CapNames {
	from: string;
	policy: string;
}
const CAP_CLI_NAMES: CapNames = { from: '--from', policy: '<policy>' };
export const CAP_API_NAMES: CapNames = { from: 'from', policy: 'policy' };

/** A business number as a campaign's `from` takes it (digits with country code). */
function checkedNumber(from: string, name: string): string {
	const parsed = campaignSettings.shape.from.safeParse(from);
	if (!parsed.success) throw new FieldError(`${name} ${parsed.error.issues[0].message}`, name);
	return parsed.data;
}

/**
 * The business's daily messaging limit (audience/budget.ts): the limit in force with the customers
 * counted and left, set (a count or `unlimited`; `field`: how the client names it), and cleared (the
 * default RUNNER_DAILY_LIMIT holds again).
 */
export function showBudget(context: RunnerContext): Promise<BudgetView> {
	return showBudgetOf(context);
}
export async function setBudget(
	context: RunnerContext,
	limit: string | number,
	field = '<limit>',
): Promise<BudgetView> {
	const view = await setBudgetOf(context, limit, field);
	context.log.info({ limit: view.limit }, 'daily messaging limit set');
	return view;
}
export async function clearBudget(context: RunnerContext): Promise<BudgetView> {
	const view = await clearBudgetOf(context);
	context.log.info({ limit: view.limit, source: view.source }, 'daily messaging limit cleared');
	return view;
}

/**
 * Counts the customer of one template send to `phone` (with country code) under the daily limit,
 * for any send of the business's outside a campaign (a workflow's): `counted` (it may go), or not
 * before `nextAt` (ms) and `waitMs` from now. A customer counted within the span draws nothing more.
 */
export function countCustomer(context: RunnerContext, phone: string, field = 'phone'): Promise<BudgetCount> {
	return countCustomerOf(context, phoneOf(phone, field));
}
