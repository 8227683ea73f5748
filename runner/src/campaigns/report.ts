/** The per-recipient report, in source order, streamed a chunk at a time: JSON rows or CSV. */

import { parsePhoneNumber } from 'convo-contract';

import type { RunnerContext } from '../context';
import { FieldError, NotFoundError } from '../errors';
import { csvRows } from '../csv';
import type { Outcome } from '../ledger';
import { decodeRecipient } from './schema';
import { getCampaign } from './store';
import { repliedAt } from '../tracking/replies';
import { deliveryInfo, trackedRecords, type Delivery } from '../tracking/tracking';
import { isoOrNull } from '../isoTime';

export interface ReportRow {
	line: number;
	phone: string;
	outcome: Outcome;
	message_id: string | null;
	error: string | null;
	attempts: number;
	first_attempt_at: string | null;
	last_attempt_at: string | null;
	/** What became of the sent message ('' while unknown or not sent): tracking/tracking.ts. */
	delivery: Delivery;
	delivered_at: string | null;
	read_at: string | null;
	replied_at: string | null;
	delivery_error: string | null;
	/**
	 * An A/B test's only (campaigns/abTest.ts): the variant whose template the recipient gets (its
	 * own in the test; the winner's for the remainder, null until chosen), and whether it is in the test.
	 */
	variant?: number | null;
	in_test?: boolean;
}

/** The report's columns, in order (the CSV's header; `campaign report --help` lists them). */
export const REPORT_COLUMNS: Array<keyof ReportRow> = [
	'line',
	'phone',
	'outcome',
	'message_id',
	'error',
	'attempts',
	'first_attempt_at',
	'last_attempt_at',
	'delivery',
	'delivered_at',
	'read_at',
	'replied_at',
	'delivery_error',
];

/** An A/B test's report adds these, last. */
const VARIANT_COLUMNS: Array<keyof ReportRow> = ['variant', 'in_test'];

/** A page of the report: rows with one of `outcomes` (all when absent), `offset` of them skipped, at most `limit`. */
export interface ReportPage {
	offset?: number;
	limit?: number;
	outcomes?: readonly Outcome[];
	/** Only recipients whose message was sent and whose delivery failed (`--outcome failed-delivery`). */
	failedDelivery?: boolean;
	/** Only the row of this phone (digits, as the create keeps them): a campaign holds a phone once. */
	phone?: string;
}

export async function* reportRows(
	context: RunnerContext,
	id: string,
	page: ReportPage = {},
): AsyncGenerator<ReportRow> {
	const campaign = await getCampaign(context, id);
	// failed-delivery alone: sent rows whose tracking says failed; with outcomes beside it, either.
	const outcomes = page.outcomes && page.outcomes.length > 0 ? new Set(page.outcomes) : undefined;
	const wanted = outcomes || page.failedDelivery ? (outcomes ?? new Set<Outcome>()) : undefined;
	let skip = page.offset ?? 0;
	let left = page.limit ?? Infinity;
	// Unfiltered, a row's place is its index: the walk starts at the offset instead of counting up to it.
	const start = wanted ? 0 : Math.min(skip, campaign.total);
	if (!wanted) skip = 0;
	if (left <= 0) return;
	for await (const { from, records } of context.ledger.walk(id, campaign.total, start)) {
		const fields = records.map((_, i) => String(from + i));
		const recipients = await context.redis.hmget(context.keys.recipients(campaign.from, id), ...fields);
		const indexes = records.map((_, i) => from + i);
		const [tracked, replied] = await Promise.all([
			trackedRecords(context, campaign, indexes),
			repliedAt(context, campaign, indexes),
		]);
		for (let i = 0; i < records.length; i++) {
			const record = records[i];
			const recipient = recipients[i] ? decodeRecipient(recipients[i] as string) : undefined;
			if (!record || !recipient) continue;
			const delivery = deliveryInfo(record.outcome === 'sent' ? tracked[i] : undefined);
			if (wanted && !wanted.has(record.outcome) && !(page.failedDelivery && delivery.delivery === 'failed')) continue;
			if (page.phone !== undefined && recipient.phone !== page.phone) continue;
			if (skip > 0) {
				skip--;
				continue;
			}
			if (left-- <= 0) return;
			yield {
				line: recipient.line,
				phone: recipient.phone,
				outcome: record.outcome,
				message_id: record.outcome === 'sent' ? record.ref || null : null,
				error: record.error || null,
				attempts: record.attempts,
				first_attempt_at: isoOrNull(record.firstAttemptAt),
				last_attempt_at: isoOrNull(record.lastAttemptAt),
				...delivery,
				replied_at: isoOrNull(replied[i]),
				...(campaign.abTest
					? {
							variant: recipient.variant ? recipient.variant : (campaign.abTest.winner ?? null),
							in_test: Boolean(recipient.variant),
						}
					: {}),
			};
		}
		// A full page reads no further chunk.
		if (left <= 0) return;
	}
}

/**
 * One recipient's row, found by phone as the operator types it (normalised as the create does);
 * `field` names the phone as the client calls it. Not a recipient of the campaign: NotFoundError.
 */
export async function findRecipient(
	context: RunnerContext,
	id: string,
	phone: string,
	field = 'phone',
): Promise<ReportRow> {
	const parsed = parsePhoneNumber(phone);
	if (!parsed.ok) throw new FieldError(`${field} ${parsed.reason}`, field);
	await getCampaign(context, id);
	for await (const row of reportRows(context, id, { phone: parsed.digits })) return row;
	throw new NotFoundError(`phone ${parsed.digits} is not a recipient of campaign ${id}`);
}

/**
 * The report as text chunks: a JSON array, or CSV with a header;
 * `rows` when they are at hand already (one found by phone).
 */
export async function* reportText(
	context: RunnerContext,
	id: string,
	format: 'json' | 'csv',
	page: ReportPage = {},
	rows: AsyncIterable<ReportRow> | Iterable<ReportRow> = reportRows(context, id, page),
): AsyncGenerator<string> {
	let first = true;
	const columns = (await getCampaign(context, id)).abTest ? [...REPORT_COLUMNS, ...VARIANT_COLUMNS] : REPORT_COLUMNS;
	if (format === 'csv') yield csvRows([columns]);
	else yield '[';
	for await (const row of rows) {
		if (format === 'csv') yield csvRows([columns.map((column) => row[column] ?? '')]);
		else {
			yield `${first ? '\n' : ',\n'}${JSON.stringify(row)}`;
			first = false;
		}
	}
	if (format === 'json') yield first ? ']\n' : '\n]\n';
}

export interface ErrorGroup {
	outcome: Outcome;
	/** The reason as the group's first recipient got it (a real text, never a pattern). */
	reason: string;
	count: number;
	/** The group's reasons differ in their numbers (phones, line numbers): `reason` is one example of them. */
	varies: boolean;
}

/**
 * Reasons grouped as /errors shows them: reasons that differ only in their numbers (a phone, the
 * line a repeated phone was first on) are one group, shown by its first reason as an example (a
 * pattern with placeholders read as if the number were a literal "N"). A dry run tallies its
 * rejections with it too, so its reasons are those /errors shows after the real create.
 */
export class ReasonTally {
	private readonly groups = new Map<string, ErrorGroup>();

	add(outcome: Outcome, reason: string): void {
		const key = `${outcome}|${reason.replace(/\d+/g, '#')}`;
		const group = this.groups.get(key) ?? { outcome, reason, count: 0, varies: false };
		group.count++;
		if (reason !== group.reason) group.varies = true;
		this.groups.set(key, group);
	}

	/** The groups, most first. */
	top(count: number): ErrorGroup[] {
		return [...this.groups.values()].sort((a, b) => b.count - a.count).slice(0, count);
	}
}

/** Recipients that did not get the message, grouped by reason (ReasonTally), most first. */
export async function errorBreakdown(context: RunnerContext, id: string, top = 20): Promise<ErrorGroup[]> {
	const tally = new ReasonTally();
	for await (const row of reportRows(context, id)) {
		if (!row.error || row.outcome === 'sent') continue;
		tally.add(row.outcome, row.error.replace(/^line \d+: /, ''));
	}
	return tally.top(top);
}
