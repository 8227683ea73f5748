import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { CampaignReportQuery, RecipientOutcome } from '../../../shared/runnerApi/campaign';
import { RUNNER_ROUTES, runnerPath } from '../../../shared/runnerRoutes';

import { runnerRequest } from '../../transport/runner';
import { returnAllFields } from '../../descriptions/common.description';
import { campaignIdFields, runnerIdValue } from './fields';

/** Rows asked for per request while paging through a report. */
const PAGE_SIZE = 1000;

/** Every outcome of the contract (test/nodes/description.test.ts checks none is missing), and All. */
const OUTCOMES: Array<{ name: string; value: RecipientOutcome | 'all'; description: string }> = [
	{ name: 'All', value: 'all', description: 'Every recipient, whatever became of it' },
	{ name: 'Cancelled', value: 'cancelled', description: 'Not sent because the campaign was cancelled' },
	{
		name: 'Capped',
		value: 'capped',
		description:
			'Not sent: the frequency cap across campaigns held it back; the error says when it would next be allowed',
	},
	{ name: 'Claimed', value: 'claimed', description: 'Being sent right now' },
	{ name: 'Failed', value: 'failed', description: 'The service refused the send' },
	{
		name: 'Not Sent',
		value: 'not_sent',
		description: 'Proven not sent (campaign stopped, or reconciled); can be retried',
	},
	{
		name: 'Expired',
		value: 'expired',
		description: "Not sent: the campaign's end passed first (its send window may have kept it waiting)",
	},
	{ name: 'Pending', value: 'pending', description: 'Waiting for its turn' },
	{ name: 'Rejected', value: 'rejected', description: 'Refused at create: bad phone, duplicate, bad variables' },
	{ name: 'Sent', value: 'sent', description: 'Accepted by the service, with its message ID' },
	{
		name: 'Suppressed',
		value: 'suppressed',
		description: 'Never sent: the phone is on the suppression list (the error says why and since when)',
	},
	{
		name: 'Unknown',
		value: 'unknown',
		description: 'May or may not have been sent (a timeout); reconcile resolves it',
	},
];

const properties: INodeProperties[] = [
	...campaignIdFields,
	{
		displayName: 'Outcome',
		name: 'outcome',
		type: 'options',
		options: OUTCOMES,
		default: 'all',
		description: 'Only recipients with this outcome',
	},
	...returnAllFields,
];

export const description = updateDisplayOptions(
	{ show: { resource: ['campaign'], operation: ['getReport'] } },
	properties,
);

/**
 * Reports are read one after another: each is paged through on
 * its own, and parallel reports only hold more rows at once.
 */
export const batching = false;

function rowsOf(body: unknown): IDataObject[] {
	if (Array.isArray(body)) return body as IDataObject[];
	const record = (body ?? {}) as IDataObject;
	for (const key of ['rows', 'items']) if (Array.isArray(record[key])) return record[key] as IDataObject[];
	return [];
}

/**
 * Rows of a campaign's report in source order (line, phone, outcome, message_id, error, attempts,
 * first and last attempt), `wanted` at most, paged through PAGE_SIZE rows at a time. Campaign →
 * Create reads it too, to join rows to its input items; it passes no item index.
 */
export async function readReport(
	this: IExecuteFunctions,
	id: string,
	options: { outcome: string; wanted: number; itemIndex: number | undefined },
): Promise<IDataObject[]> {
	const { outcome, wanted, itemIndex } = options;
	const rows: IDataObject[] = [];
	for (let offset = 0; rows.length < wanted; ) {
		const limit = Math.min(PAGE_SIZE, wanted - rows.length);
		const qs: CampaignReportQuery = { format: 'json', limit, offset };
		if (outcome !== 'all') qs.outcome = outcome;
		const { body } = await runnerRequest.call(this, {
			method: RUNNER_ROUTES.campaignReport.method,
			path: runnerPath(RUNNER_ROUTES.campaignReport, id),
			qs: qs as IDataObject,
			itemIndex,
		});
		const page = rowsOf(body);
		if (page.length > limit) {
			// A runner without paging answers the whole report at once: filter and cut it here.
			const all = outcome === 'all' ? page : page.filter((row) => row.outcome === outcome);
			return all.slice(0, wanted === Infinity ? undefined : wanted);
		}
		// Rows come in source order: a page that starts at a line already read means the runner
		// ignored the offset, and asking again would repeat it.
		if (rows.length > 0 && page.length > 0 && Number(page[0].line) <= Number(rows[rows.length - 1].line)) break;
		rows.push(...page);
		if (page.length < limit) break;
		offset += page.length;
	}
	return rows;
}

/** One output item per recipient, in source order (see readReport). */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = runnerIdValue.call(this, 'campaignId', 'Campaign ID', itemIndex);
	const outcome = this.getNodeParameter('outcome', itemIndex, 'all') as string;
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const wanted = returnAll ? Infinity : (this.getNodeParameter('limit', itemIndex, 50) as number);
	return await readReport.call(this, id, { outcome, wanted, itemIndex });
}
