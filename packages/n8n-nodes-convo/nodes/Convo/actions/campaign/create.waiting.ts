import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import { parsePhoneNumber } from '../../../shared/phone';
import type { CampaignAnswer } from '../../../shared/runnerApi/campaign';
import { runnerAnswer } from '../../transport/runner';
import { MAX_WAIT_SECONDS } from './create.description';
import { readReport } from './getReport.operation';

/** How often a waiting Create reads the campaign's status. */
const POLL_MS = 1000;
/** States a campaign does not leave by itself: waiting ends there. */
const FINAL_STATES = new Set(['completed', 'failed', 'cancelled']);

interface Waited {
	status: Partial<CampaignAnswer> & IDataObject;
	seconds: number;
	timedOut: boolean;
}

/**
 * What a waiting Create adds to its answer: the counts and last
 * error, how long it waited, and whether it stopped waiting first.
 */
export function waitFields(waited: Waited): IDataObject {
	return {
		counts: waited.status.counts as IDataObject,
		last_error: waited.status.last_error as string | null,
		waited_seconds: waited.seconds,
		wait_timed_out: waited.timedOut,
	};
}

/**
 * Reads the campaign's status every POLL_MS until it is final or `maxWaitSeconds` passed. Past the
 * wait it answers the status as it is, flagged: the campaign goes on at the runner, which is not
 * the node's failure (docs/decisions/nodes/campaign-create-max-wait.md). Progress goes to the
 * editor's console (manual executions).
 */
export async function waitForCampaign(
	this: IExecuteFunctions,
	campaignId: string,
	maxWaitSeconds: number,
): Promise<Waited> {
	const bound = Math.min(MAX_WAIT_SECONDS, Math.max(1, Number.isFinite(maxWaitSeconds) ? maxWaitSeconds : 60));
	const began = Date.now();
	const deadline = began + bound * 1000;
	let shown = '';
	for (;;) {
		const status = (await runnerAnswer(this, 'getCampaign', { id: campaignId })) as Waited['status'];
		const seconds = Math.round((Date.now() - began) / 100) / 10;
		const counts = (status.counts ?? {}) as IDataObject;
		const progress =
			`Campaign ${campaignId}: ${String(status.state)}, ` +
			`${Number(counts.sent ?? 0)} of ${Number(status.total ?? 0)} sent`;
		if (progress !== shown) this.sendMessageToUI(progress);
		shown = progress;
		if (FINAL_STATES.has(String(status.state))) return { status, seconds, timedOut: false };
		const left = deadline - Date.now();
		if (left <= 0) return { status, seconds, timedOut: true };
		await sleep(Math.min(POLL_MS, left));
	}
}

/**
 * One output item per input item: its own fields and, under "campaign", its row of the report
 * (row of item i is line i + 1, as Create numbered them). Before joining, each row's phone is
 * checked against the item's: a Campaign Key that names an earlier campaign with other rows
 * fails the node rather than pair outcomes with the wrong customers.
 */
export async function recipientItems(
	this: IExecuteFunctions,
	campaignId: string,
	state: string | undefined,
	waited: Waited | undefined,
	rows: IDataObject[],
): Promise<INodeExecutionData[]> {
	const report = await readReport.call(this, campaignId, { outcome: 'all', wanted: Infinity, itemIndex: undefined });
	const byLine = new Map(report.map((row) => [Number(row.line), row]));
	const items = this.getInputData();
	const mismatch = (line: number) => {
		const row = byLine.get(line);
		if (!row) return true;
		const typed = parsePhoneNumber(String(rows[line - 1].phone ?? ''));
		// A rejected row may hold no readable phone; any other row holds the digits the item gave.
		return row.outcome !== 'rejected' && (!typed.ok || typed.digits !== String(row.phone));
	};
	if (report.length !== rows.length || rows.some((_, index) => mismatch(index + 1))) {
		throw new NodeOperationError(this.getNode(), `Campaign ${campaignId} holds other recipients than this input`, {
			description:
				`Its report has ${report.length} rows for ${rows.length} input items, ` +
				"or a row's phone differs from its item's: the Campaign Key names a campaign made from other input. " +
				'Nothing was sent by this execution. Give a new Campaign Key, ' +
				`or read campaign ${campaignId} with Get Report.`,
		});
	}
	return items.map((item, index) => {
		const { line, ...row } = byLine.get(index + 1) as IDataObject;
		const campaign: IDataObject = { campaign_id: campaignId, campaign_state: state, line, ...row };
		if (waited) campaign.wait_timed_out = waited.timedOut;
		return { json: { ...item.json, campaign }, pairedItem: { item: index } };
	});
}
