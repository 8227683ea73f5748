import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	type AddRecipientsAnswer,
	type AddRecipientsBody,
	type CampaignAnswer,
	type CreateCampaignBody,
	CREATE_ROWS_MAX,
} from '../../../shared/runnerApi/campaign';
import { RECIPIENTS_PER_CHUNK } from '../../../shared/runnerRoutes';
import { fieldLabels } from '../../helpers/fieldLabels';
import { runnerAnswer } from '../../transport/runner';
import { apiFields, description } from './create.description';
import { campaignSettings, keyBase, nameOf, rowOf } from './create.rows';
import { recipientItems, waitFields, waitForCampaign } from './create.waiting';

export { apiFields, description };

const labelOf = fieldLabels({ description, apiFields });

/**
 * Starts the draft. When no answer came back (every try failed), the runner is asked whether the
 * campaign started before the node fails: a started campaign is the answer; one the node cannot
 * learn about fails with its id and says it may be running.
 */
async function startDraft(this: IExecuteFunctions, campaignId: string, key: string): Promise<Partial<CampaignAnswer>> {
	try {
		// A draft with Test Send To sends its test here; a refusal
		// names the field (labelOf) and leaves the draft unstarted.
		return await runnerAnswer(this, 'startCampaign', {
			id: campaignId,
			body: {},
			idempotencyKey: `${key}-start`,
			labelOf,
		});
	} catch (startError) {
		let current: Partial<CampaignAnswer>;
		try {
			current = await runnerAnswer(this, 'getCampaign', { id: campaignId });
		} catch {
			throw new NodeOperationError(
				this.getNode(),
				`Campaign ${campaignId} may be running: the runner did not answer its start`,
				{
					description:
						`${(startError as Error).message}. Read campaign ${campaignId} with Campaign → Get before anything ` +
						'else. Running this node again with the same input and Campaign Key is safe: ' +
						`it finds campaign ${campaignId} and sends nobody twice.`,
				},
			);
		}
		if (current.state !== 'draft') return current;
		throw new NodeOperationError(
			this.getNode(),
			`Campaign ${campaignId} was not started: ${(startError as Error).message}`,
			{
				description:
					`Nothing was sent; campaign ${campaignId} is still a draft ` +
					'(removed after 24 h). Running this node again with the same input starts this same campaign.',
			},
		);
	}
}

/**
 * All input items become one campaign: a draft is created, the rows go in chunks of
 * RECIPIENTS_PER_CHUNK (row of item i is line i + 1, so a rejection names its item), then the
 * draft starts. Nothing is sent before the start, and each request carries an Idempotency-Key
 * of this campaign (keyBase), so a retry finishes the same campaign instead of making a second one.
 */
export async function executeAll(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const items = this.getInputData();
	if (items.length === 0) return [];

	const settings = campaignSettings.call(this);

	const name = nameOf.call(this);

	const rows = items.map((_, itemIndex) => rowOf.call(this, itemIndex));
	// The name labels the campaign and is left out of the key: renaming
	// the workflow does not make another execution send again.
	const key = keyBase.call(this, settings, rows);

	const options = this.getNodeParameter('options', 0, {}) as IDataObject;
	if (options.dryRun === true)
		return await dryRun.call(this, { ...settings, ...(name === undefined ? {} : { name }) }, rows);

	const draftBody: CreateCampaignBody = {
		...(settings as Omit<CreateCampaignBody, 'draft' | 'recipients'>),
		...(name === undefined ? {} : { name }),
		draft: true,
		recipients: [],
	};
	const draft = await runnerAnswer(this, 'createCampaign', {
		body: draftBody as IDataObject,
		idempotencyKey: `${key}-draft`,
		labelOf,
	});
	const campaignId = String(draft.id ?? '');
	if (campaignId === '') {
		throw new NodeOperationError(this.getNode(), 'The runner answered the create without a campaign id', {
			description:
				'Check that the Runner URL of the Convo Runner API credential points at convo-runner ' +
				'(a version with draft campaigns).',
		});
	}

	const rejections: IDataObject[] = [];
	let totals: Partial<AddRecipientsAnswer> = { total: 0, accepted: 0, rejected: 0 };
	for (let start = 0, chunk = 0; start < rows.length; start += RECIPIENTS_PER_CHUNK, chunk++) {
		const chunkBody: AddRecipientsBody = {
			recipients: rows.slice(start, start + RECIPIENTS_PER_CHUNK),
			first_line: start + 1,
		};
		const answer = await runnerAnswer(this, 'addRecipients', {
			id: campaignId,
			body: chunkBody as IDataObject,
			idempotencyKey: `${key}-rows-${chunk}`,
			labelOf,
		});
		for (const rejection of answer.added?.rejections ?? []) {
			const line = Number(rejection.line);
			rejections.push({ item: line - 1, line, phone: rejection.phone, reason: rejection.reason });
		}
		totals = answer;
	}

	const started = await startDraft.call(this, campaignId, key);
	const waited =
		options.waitForCompletion === true
			? await waitForCampaign.call(this, campaignId, Number(options.maxWaitSeconds ?? 60))
			: undefined;
	const state = waited?.status.state ?? started.state;
	if (options.output === 'recipients') return await recipientItems.call(this, campaignId, state, waited, rows);

	return [
		{
			json: {
				campaign_id: campaignId,
				name: String(draft.name ?? name ?? ''),
				state,
				total: totals.total ?? rows.length,
				accepted: totals.accepted ?? 0,
				rejected: totals.rejected ?? rejections.length,
				rejections,
				...(started.test_send ? { test_send: started.test_send as IDataObject } : {}),
				...(waited ? waitFields(waited) : {}),
			},
			pairedItem: items.map((_, item) => ({ item })),
		},
	];
}

/**
 * Dry Run: every row in ONE create request with dry_run, so a repeat is found across all the items
 * exactly as the real create finds it, and nothing is stored at the runner (no draft: a draft is
 * stored). No Idempotency-Key: a dry run keeps no answer.
 * docs/decisions/nodes/campaign-dry-run-one-request.md.
 */
async function dryRun(
	this: IExecuteFunctions,
	settings: IDataObject,
	rows: IDataObject[],
): Promise<INodeExecutionData[]> {
	if (rows.length > CREATE_ROWS_MAX) {
		throw new NodeOperationError(
			this.getNode(),
			`Dry Run checks at most ${CREATE_ROWS_MAX.toLocaleString('en-US')} items; ` +
				`this input has ${rows.length.toLocaleString('en-US')}`,
			{
				description:
					'Nothing was created or sent. Split the input, ' +
					"or check the whole file with the runner's CLI (campaign create --dry-run) " +
					'or an upload with dry_run=true.',
			},
		);
	}
	const body: CreateCampaignBody = {
		...(settings as Omit<CreateCampaignBody, 'recipients'>),
		recipients: rows,
		dry_run: true,
	};
	const answer = (await runnerAnswer(this, 'createCampaign', { body: body as IDataObject, labelOf })) as IDataObject;
	const rejections = ((answer.rejections ?? []) as IDataObject[]).map((rejection) => ({
		item: Number(rejection.line) - 1,
		...rejection,
	}));
	return [
		{
			json: { ...answer, rejections },
			pairedItem: rows.map((_, item) => ({ item })),
		},
	];
}
