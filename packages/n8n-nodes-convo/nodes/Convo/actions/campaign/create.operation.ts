import { createHash } from 'node:crypto';

import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, sleep, updateDisplayOptions } from 'n8n-workflow';

import {
	RATE_BOUNDS,
	RECIPIENTS_PER_CHUNK,
	type AddRecipientsAnswer,
	type AddRecipientsBody,
	type CampaignAnswer,
	type CreateCampaignBody,
	CAMPAIGN_NAME_MAX,
	CREATE_ROWS_MAX,
	campaignName,
	fitCampaignName,
	parsePhoneNumber,
} from '../../../shared';
import { runnerAnswer } from '../../transport/runner';
import { labelOfApiField } from '../../helpers/fieldLabels';
import { BUSINESS_NUMBER_LABEL, phoneDigits } from '../../helpers/phone';
import { identifierField, identifierValue, templateVariables, templateVariablesField } from '../../descriptions/common.description';
import { readReport } from './getReport.operation';
import { LocalTimeError, zonedInstant } from './localTime';

/** The longest wait a user can set: an execution should not hold a worker for more than an hour. */
const MAX_WAIT_SECONDS = 3600;
/** How often a waiting Create reads the campaign's status. */
const POLL_MS = 1000;
/** States a campaign does not leave by itself: waiting ends there. */
const FINAL_STATES = new Set(['completed', 'failed', 'cancelled']);

const properties: INodeProperties[] = [
	{
		displayName:
			'All input items become the recipients of ONE campaign, which the runner sends at the given rate, durably, never twice to a recipient. Rows it cannot use (a bad phone, a duplicate) come back under "rejections" with their item index; the others are sent.',
		name: 'campaignCreateNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Campaign Name',
		name: 'campaignName',
		type: 'string',
		default: '',
		placeholder: 'e.g. March promo',
		description: `Shown beside the campaign ID in the runner's lists, its console and Campaign ID → From List (1 to ${CAMPAIGN_NAME_MAX} characters, one line). Empty: the workflow's name.`,
	},
	identifierField({
		displayName: 'Template ID',
		name: 'templateId',
		description: 'ID of an approved template of the business whose API key the runner uses, shown with the template in the Convo dashboard',
	}),
	{
		displayName: BUSINESS_NUMBER_LABEL,
		name: 'fromPhoneNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. +49 30 1234567',
		description: 'Business phone number the campaign is sent from, with country code. The runner keeps one rate per number.',
	},
	{
		displayName: 'Rate (Sends per Second)',
		name: 'rate',
		type: 'number',
		typeOptions: { minValue: RATE_BOUNDS.min, maxValue: RATE_BOUNDS.max },
		default: 60,
		description: 'How many messages per second the runner sends for this campaign (campaigns on one number share the strictest rate)',
	},
	{
		displayName: 'Phone',
		name: 'phone',
		type: 'string',
		required: true,
		default: '={{ $json.phone }}',
		placeholder: 'e.g. +49 151 12345678',
		description:
			'Recipient of each item, with country code (read per item: the default takes the item\'s "phone" field). Spaces, dashes and a leading + are fine; a bad or repeated number rejects that item only.',
	},
	{
		displayName: 'Define Variables Using',
		name: 'defineUsing',
		type: 'options',
		options: [
			{ name: 'Fields Below', value: 'fields', description: 'Map each template variable to a value of the item' },
			{ name: 'JSON', value: 'json', description: 'Give each item\'s variables as one JSON object, as AI agents and mapped data do best' },
		],
		default: 'fields',
		description: 'How the template variables of each recipient are given',
	},
	templateVariablesField(
		'Template variables of each recipient, read per item: name "1", "2", ... for positional variables or the variable name, and a value mapped from the item (e.g. the first_name field).',
		'Text that replaces the variable for this recipient',
	),
	{
		displayName: 'Variables (JSON)',
		name: 'variablesJson',
		type: 'json',
		default: '{}',
		description:
			'Template variables of each recipient as one JSON object (read per item): {"1": "Ada"} for positional variables, {"first_name": "Ada"} for named ones',
		displayOptions: { show: { defineUsing: ['json'] } },
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Optional settings of the campaign',
		options: [
			identifierField({
				displayName: 'Agent ID',
				name: 'agentId',
				description: 'ID of an agent of the business to assign to each conversation: id in the output of Agent → Create, or shown with the agent in the Convo dashboard',
				required: false,
			}),
			{
				displayName: 'Campaign Key',
				name: 'campaignKey',
				type: 'string',
				default: '',
				placeholder: 'e.g. spring-sale-2026-03-01',
				description:
					'Names this campaign so that it is sent once: within 24 h, running this node again with the same key returns the first campaign instead of a second. Empty: the key is this workflow, this node, the settings and every row, so a Retry or a re-run of the same input never sends twice. Set a new key to send the same content again on purpose.',
			},
			{
				displayName: 'End Time',
				name: 'endAt',
				type: 'dateTime',
				default: '',
				description:
					"When the campaign ends: recipients still unsent then are counted Expired, never sent, and the campaign completes. A time without an offset is read in the workflow's time zone: one the clocks skip that day (daylight saving) is refused, one they show twice is the first.",
			},
			{
				displayName: 'Send Window',
				name: 'window',
				type: 'string',
				default: '',
				placeholder: 'e.g. 09:00-20:00, or mon-fri 09:00-20:00, sat 10:00-14:00',
				description:
					"Send only within these hours in each recipient's local time; recipients wait while theirs is closed. The time zone is the item's variable named tz (an IANA name such as Europe/Berlin; with a window it is not sent as a variable) or else the phone's country (a country of several zones: only while the window is open in all of them).",
			},
			{
				displayName: 'Start Time',
				name: 'startAt',
				type: 'dateTime',
				default: '',
				description: 'When the runner starts sending; empty starts at once. A time without an offset is read in the workflow\'s time zone: one the clocks skip that day (daylight saving) is refused, one they show twice is the first.',
			},
			{
				displayName: 'Test Send To',
				name: 'testTo',
				type: 'string',
				default: '',
				placeholder: 'e.g. +49 151 12345678',
				description:
					"Your own phone: before the campaign starts, the first recipient's message (same template, variables, number and agent) is sent here, and the campaign starts only if the service accepts it. A wrong template or number then fails this node and nobody is sent. The test is no recipient: it is in no count or report.",
			},
			{
				displayName: 'When Capped',
				name: 'whenCapped',
				type: 'options',
				options: [
					{ name: 'Skip (Outcome Capped)', value: 'skip', description: 'Not sent; its outcome is capped, with the time it would next be allowed' },
					{ name: 'Wait Until Allowed', value: 'wait', description: 'Stays pending and is sent once the cap allows it; the campaign completes after that' },
				],
				default: 'skip',
				description: "What becomes of a recipient the runner's frequency cap holds back (at most N campaign messages per phone per window, across campaigns: convo-runner cap set)",
			},
		],
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		description: 'What the node waits for and what it answers',
		options: [
			{
				displayName: 'Dry Run',
				name: 'dryRun',
				type: 'boolean',
				default: false,
				description: `Whether to only check the items as the campaign would, without creating or sending anything: the node answers the counts (accepted, rejected), the reasons, the first rejections with their item index and the estimated duration. One item is answered whatever Output says; no test send, no waiting. At most ${CREATE_ROWS_MAX.toLocaleString('en-US')} items.`,
			},
			{
				displayName: 'Max Wait (Seconds)',
				name: 'maxWaitSeconds',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: MAX_WAIT_SECONDS },
				default: 60,
				description:
					'With Wait for Completion: how long the node waits at most. Past it the node answers the campaign as it is then, with wait_timed_out true; the campaign goes on at the runner.',
			},
			{
				displayName: 'Output',
				name: 'output',
				type: 'options',
				options: [
					{ name: 'The Campaign', value: 'campaign', description: 'ONE item: campaign_id, state, totals and the rejected rows' },
					{
						name: 'Each Input Item With Its Outcome',
						value: 'recipients',
						description:
							'One item per input item: its own fields plus "campaign" (campaign_id, outcome, message_ID, error, attempts), so results join back to the customer. Use with Wait for Completion for final outcomes.',
					},
				],
				default: 'campaign',
				description: 'What the node answers',
			},
			{
				displayName: 'Transactional',
				name: 'transactional',
				type: 'boolean',
				default: false,
				description:
					'Whether these messages are not marketing (order updates, one-time codes): the campaign then sends to phones on the suppression list too. Shown as transactional on the campaign.',
			},
			{
				displayName: 'Wait for Completion',
				name: 'waitForCompletion',
				type: 'boolean',
				default: false,
				description:
					'Whether the node waits until the campaign has completed, failed or been cancelled (at most Max Wait), reading its status every second; suits small lists. Progress shows in the browser console of a manual run.',
			},
		],
	},
];

export const description = updateDisplayOptions({ show: { resource: ['campaign'], operation: ['create'] } }, properties);

/** The parameter that fills each runner API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	name: 'campaignName',
	template_id: 'templateId',
	from: 'fromPhoneNumber',
	rate: 'rate',
	agent_id: 'additionalFields.agentId',
	at: 'additionalFields.startAt',
	test_to: 'additionalFields.testTo',
	window: 'additionalFields.window',
	end_at: 'additionalFields.endAt',
	transactional: 'options.transactional',
	when_capped: 'additionalFields.whenCapped',
	recipients: 'phone',
};

/** Start Time or End Time as the runner takes it: with an offset as given, without one in the workflow's time zone. */
function startTime(this: IExecuteFunctions, value: unknown, label = 'Start Time'): string | undefined {
	const text = String(value ?? '').trim();
	if (text === '') return undefined;
	const refuse = (reason: string, hint: string) =>
		new NodeOperationError(this.getNode(), `${label} "${text.slice(0, 60)}" ${reason}`, {
			description: `Nothing was sent. ${hint}, or leave ${label} empty${label === 'Start Time' ? ' to start at once' : ''}.`,
		});
	if (/(Z|[+-]\d\d:?\d\d)$/i.test(text)) {
		const at = new Date(text);
		if (Number.isNaN(at.getTime())) throw refuse('is not a date and time', 'Give an ISO date and time such as 2026-03-01T09:00:00');
		return at.toISOString();
	}
	try {
		return zonedInstant(text.replace(' ', 'T'), this.getTimezone()).toISOString();
	} catch (error) {
		const why = error instanceof LocalTimeError ? error : new LocalTimeError(`cannot be read: ${(error as Error).message}`, 'Give an ISO date and time such as 2026-03-01T09:00:00');
		throw refuse(why.message, why.hint);
	}
}

/**
 * The campaign's name: Campaign Name as typed (checked by the contract's rule, so nothing is sent
 * with a name the runner would refuse), or else the workflow's name made to fit; undefined when
 * neither gives one (the runner then names it itself).
 */
function nameOf(this: IExecuteFunctions): string | undefined {
	const typed = String(this.getNodeParameter('campaignName', 0, '') ?? '');
	if (typed.trim() === '') return fitCampaignName(String(this.getWorkflow().name ?? ''));
	const checked = campaignName.safeParse(typed);
	if (!checked.success) {
		throw new NodeOperationError(this.getNode(), `Campaign Name ${checked.error.issues[0].message}`, {
			description: `Nothing was sent. Give a name of 1 to ${CAMPAIGN_NAME_MAX} characters on one line, or leave Campaign Name empty to use the workflow's name.`,
		});
	}
	return checked.data;
}

/** One recipient row as the runner reads rows (like a CSV line): phone, then the variables. */
function rowOf(this: IExecuteFunctions, itemIndex: number): IDataObject {
	const variables = templateVariables.call(this, itemIndex);
	if (Object.prototype.hasOwnProperty.call(variables, 'phone')) {
		throw new NodeOperationError(this.getNode(), 'Variable name "phone" is reserved', {
			itemIndex,
			description: 'Nothing was sent. The recipient goes in Phone; name the variable otherwise.',
		});
	}
	const row: IDataObject = {};
	// The runner checks the phone (and rejects just this row when it is bad), so it goes as typed.
	const phone = this.getNodeParameter('phone', itemIndex, '');
	row.phone = phone === undefined || phone === null ? '' : String(phone);
	for (const [name, value] of Object.entries(variables)) {
		row[name] = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
	}
	return row;
}

/**
 * The base of the Idempotency-Keys of one campaign: the workflow, the node and either the user's
 * Campaign Key or the campaign's content (settings and every row), hashed so that it fits a header.
 * It never depends on the execution: n8n's Retry of a failed execution, Retry On Fail, the node's
 * own retries and a new execution of the same input all send the same keys, so the runner answers
 * with the first campaign and nothing is sent twice (docs/decisions.md, "Hardening (#17)").
 */
function keyBase(this: IExecuteFunctions, settings: IDataObject, rows: IDataObject[]): string {
	const node = this.getNode();
	const named = String(this.getNodeParameter('additionalFields.campaignKey', 0, '') ?? '').trim();
	const parts = ['campaign', String(this.getWorkflow().id ?? ''), node.name, ...(named !== '' ? ['key', named] : ['content', JSON.stringify([settings, rows])])];
	return `n8n-${createHash('sha256').update(parts.join('\u0000'), 'utf8').digest('hex').slice(0, 40)}`;
}

/**
 * Starts the draft. When no answer came back (every try failed), the runner is asked whether the
 * campaign started before the node fails: a started campaign is the answer; one the node cannot
 * learn about fails with its id and says it may be running.
 */
async function startDraft(this: IExecuteFunctions, campaignId: string, key: string): Promise<Partial<CampaignAnswer>> {
	try {
		// A draft with Test Send To sends its test here; a refusal names the field (labelOf) and leaves the draft unstarted.
		return await runnerAnswer(this, 'startCampaign', { id: campaignId, body: {}, idempotencyKey: `${key}-start`, labelOf: (apiField) => labelOfApiField(this, apiField) });
	} catch (startError) {
		let current: Partial<CampaignAnswer>;
		try {
			current = await runnerAnswer(this, 'getCampaign', { id: campaignId });
		} catch {
			throw new NodeOperationError(this.getNode(), `Campaign ${campaignId} may be running: the runner did not answer its start`, {
				description: `${(startError as Error).message}. Read campaign ${campaignId} with Campaign → Get before anything else. Running this node again with the same input and Campaign Key is safe: it finds campaign ${campaignId} and sends nobody twice.`,
			});
		}
		if (current.state !== 'draft') return current;
		throw new NodeOperationError(this.getNode(), `Campaign ${campaignId} was not started: ${(startError as Error).message}`, {
			description: `Nothing was sent; campaign ${campaignId} is still a draft (removed after 24 h). Running this node again with the same input starts this same campaign.`,
		});
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

	const settings: IDataObject = {
		template_id: identifierValue.call(this, 'templateId', 0),
		from: phoneDigits.call(this, this.getNodeParameter('fromPhoneNumber', 0), BUSINESS_NUMBER_LABEL, undefined),
		rate: this.getNodeParameter('rate', 0, 60) as number,
	};
	if (settings.template_id === '') {
		throw new NodeOperationError(this.getNode(), 'Template ID is empty', { description: 'Nothing was sent. Give the ID of an approved template.' });
	}
	const agentId = identifierValue.call(this, 'additionalFields.agentId', 0);
	if (agentId !== '') settings.agent_id = agentId;
	const at = startTime.call(this, this.getNodeParameter('additionalFields.startAt', 0, ''));
	if (at !== undefined) settings.at = at;
	const testTo = String(this.getNodeParameter('additionalFields.testTo', 0, '') ?? '').trim();
	if (testTo !== '') settings.test_to = phoneDigits.call(this, testTo, 'Test Send To', undefined);
	const window = String(this.getNodeParameter('additionalFields.window', 0, '') ?? '').trim();
	if (window !== '') settings.window = window;
	const endAt = startTime.call(this, this.getNodeParameter('additionalFields.endAt', 0, ''), 'End Time');
	if (endAt !== undefined) settings.end_at = endAt;
	if ((this.getNodeParameter('options', 0, {}) as IDataObject).transactional === true) settings.transactional = true;
	const whenCapped = this.getNodeParameter('additionalFields.whenCapped', 0, 'skip') as string;
	if (whenCapped === 'wait') settings.when_capped = whenCapped;

	const name = nameOf.call(this);

	const rows = items.map((_, itemIndex) => rowOf.call(this, itemIndex));
	// The name labels the campaign and is left out of the key: renaming the workflow does not make a re-run send again.
	const key = keyBase.call(this, settings, rows);
	const labelOf = (apiField: string) => labelOfApiField(this, apiField);

	const options = this.getNodeParameter('options', 0, {}) as IDataObject;
	if (options.dryRun === true) return await dryRun.call(this, { ...settings, ...(name === undefined ? {} : { name }) }, rows);

	const draftBody: CreateCampaignBody = { ...(settings as Omit<CreateCampaignBody, 'draft' | 'recipients'>), ...(name === undefined ? {} : { name }), draft: true, recipients: [] };
	const draft = await runnerAnswer(this, 'createCampaign', {
		body: draftBody as IDataObject,
		idempotencyKey: `${key}-draft`,
		labelOf,
	});
	const campaignId = String(draft.id ?? '');
	if (campaignId === '') {
		throw new NodeOperationError(this.getNode(), 'The runner answered the create without a campaign id', {
			description: 'Check that the Runner URL of the Convo Runner API credential points at convo-runner (a version with draft campaigns).',
		});
	}

	const rejections: IDataObject[] = [];
	let totals: Partial<AddRecipientsAnswer> = { total: 0, accepted: 0, rejected: 0 };
	for (let start = 0, chunk = 0; start < rows.length; start += RECIPIENTS_PER_CHUNK, chunk++) {
		const chunkBody: AddRecipientsBody = { recipients: rows.slice(start, start + RECIPIENTS_PER_CHUNK), first_line: start + 1 };
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
	const waited = options.waitForCompletion === true ? await waitForCampaign.call(this, campaignId, Number(options.maxWaitSeconds ?? 60)) : undefined;
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
 * stored). No Idempotency-Key: a dry run keeps no answer. docs/decisions.md, "Dry runs".
 */
async function dryRun(this: IExecuteFunctions, settings: IDataObject, rows: IDataObject[]): Promise<INodeExecutionData[]> {
	if (rows.length > CREATE_ROWS_MAX) {
		throw new NodeOperationError(this.getNode(), `Dry Run checks at most ${CREATE_ROWS_MAX.toLocaleString('en-US')} items; this input has ${rows.length.toLocaleString('en-US')}`, {
			description: 'Nothing was created or sent. Split the input, or check the whole file with the runner\'s CLI (campaign create --dry-run) or an upload with dry_run=true.',
		});
	}
	const body: CreateCampaignBody = { ...(settings as Omit<CreateCampaignBody, 'recipients'>), recipients: rows, dry_run: true };
	const answer = (await runnerAnswer(this, 'createCampaign', { body: body as IDataObject, labelOf: (apiField) => labelOfApiField(this, apiField) })) as IDataObject;
	const rejections = ((answer.rejections ?? []) as IDataObject[]).map((rejection) => ({ item: Number(rejection.line) - 1, ...rejection }));
	return [
		{
			json: { ...answer, rejections },
			pairedItem: rows.map((_, item) => ({ item })),
		},
	];
}

interface Waited {
	status: Partial<CampaignAnswer> & IDataObject;
	seconds: number;
	timedOut: boolean;
}

/** What a waiting Create adds to its answer: the counts and last error, how long it waited, and whether it stopped waiting first. */
function waitFields(waited: Waited): IDataObject {
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
 * the node's failure (docs/decisions.md, #21). Progress goes to the editor's console (manual runs).
 */
async function waitForCampaign(this: IExecuteFunctions, campaignId: string, maxWaitSeconds: number): Promise<Waited> {
	const bound = Math.min(MAX_WAIT_SECONDS, Math.max(1, Number.isFinite(maxWaitSeconds) ? maxWaitSeconds : 60));
	const began = Date.now();
	const deadline = began + bound * 1000;
	let shown = '';
	for (;;) {
		const status = (await runnerAnswer(this, 'getCampaign', { id: campaignId })) as Waited['status'];
		const seconds = Math.round((Date.now() - began) / 100) / 10;
		const counts = (status.counts ?? {}) as IDataObject;
		const progress = `Campaign ${campaignId}: ${String(status.state)}, ${Number(counts.sent ?? 0)} of ${Number(status.total ?? 0)} sent`;
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
async function recipientItems(this: IExecuteFunctions, campaignId: string, state: string | undefined, waited: Waited | undefined, rows: IDataObject[]): Promise<INodeExecutionData[]> {
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
			description: `Its report has ${report.length} rows for ${rows.length} input items, or a row's phone differs from its item's: the Campaign Key names a campaign made from other input. Nothing was sent by this run. Give a new Campaign Key, or read campaign ${campaignId} with Get Report.`,
		});
	}
	return items.map((item, index) => {
		const { line, ...row } = byLine.get(index + 1) as IDataObject;
		const campaign: IDataObject = { campaign_id: campaignId, campaign_state: state, line, ...row };
		if (waited) campaign.wait_timed_out = waited.timedOut;
		return { json: { ...item.json, campaign }, pairedItem: { item: index } };
	});
}
