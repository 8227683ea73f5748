/** The per-recipient report, in source order, streamed a chunk at a time: JSON rows or CSV. */

import type { RunnerContext } from '../context';
import { csvRows } from '../csv';
import type { Outcome } from '../ledger';
import { decodeRecipient } from './schema';
import { getCampaign } from './store';

export interface ReportRow {
	line: number;
	phone: string;
	outcome: Outcome;
	message_id: string | null;
	error: string | null;
	attempts: number;
	first_attempt_at: string | null;
	last_attempt_at: string | null;
}

const REPORT_COLUMNS: Array<keyof ReportRow> = ['line', 'phone', 'outcome', 'message_id', 'error', 'attempts', 'first_attempt_at', 'last_attempt_at'];

const iso = (ms?: number) => (ms ? new Date(ms).toISOString() : null);

/** A page of the report: rows with one of `outcomes` (all when absent), `offset` of them skipped, at most `limit`. */
export interface ReportPage {
	offset?: number;
	limit?: number;
	outcomes?: readonly Outcome[];
}

export async function* reportRows(context: RunnerContext, id: string, page: ReportPage = {}): AsyncGenerator<ReportRow> {
	const campaign = await getCampaign(context, id);
	const wanted = page.outcomes && page.outcomes.length > 0 ? new Set(page.outcomes) : undefined;
	let skip = page.offset ?? 0;
	let left = page.limit ?? Infinity;
	// Unfiltered, a row's place is its index: the walk starts at the offset instead of counting up to it.
	const start = wanted ? 0 : Math.min(skip, campaign.total);
	if (!wanted) skip = 0;
	if (left <= 0) return;
	for await (const { from, records } of context.ledger.walk(id, campaign.total, start)) {
		const fields = records.map((_, i) => String(from + i));
		const recipients = await context.redis.hmget(context.keys.recipients(campaign.from, id), ...fields);
		for (let i = 0; i < records.length; i++) {
			const record = records[i];
			const recipient = recipients[i] ? decodeRecipient(recipients[i] as string) : undefined;
			if (!record || !recipient) continue;
			if (wanted && !wanted.has(record.outcome)) continue;
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
				first_attempt_at: iso(record.firstAttemptAt),
				last_attempt_at: iso(record.lastAttemptAt),
			};
		}
		// A full page reads no further chunk.
		if (left <= 0) return;
	}
}

/** The report as text chunks: a JSON array, or CSV with a header. */
export async function* reportText(context: RunnerContext, id: string, format: 'json' | 'csv', page: ReportPage = {}): AsyncGenerator<string> {
	let first = true;
	if (format === 'csv') yield csvRows([REPORT_COLUMNS]);
	else yield '[';
	for await (const row of reportRows(context, id, page)) {
		if (format === 'csv') yield csvRows([REPORT_COLUMNS.map((column) => row[column] ?? '')]);
		else {
			yield `${first ? '\n' : ',\n'}${JSON.stringify(row)}`;
			first = false;
		}
	}
	if (format === 'json') yield first ? ']\n' : '\n]\n';
}

/** Recipients that did not get the message, grouped by reason (the line number cut off), most first. */
export async function errorBreakdown(context: RunnerContext, id: string, top = 20): Promise<Array<{ outcome: Outcome; reason: string; count: number }>> {
	const groups = new Map<string, { outcome: Outcome; reason: string; count: number }>();
	for await (const row of reportRows(context, id)) {
		if (!row.error || row.outcome === 'sent') continue;
		const reason = row.error.replace(/^line \d+: /, '').replace(/\d{7,15}/g, 'N');
		const key = `${row.outcome}|${reason}`;
		const group = groups.get(key) ?? { outcome: row.outcome, reason, count: 0 };
		group.count++;
		groups.set(key, group);
	}
	return [...groups.values()].sort((a, b) => b.count - a.count).slice(0, top);
}
