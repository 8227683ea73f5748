import type { INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { CAMPAIGN_NAME_MAX, CREATE_ROWS_MAX } from '../../../shared/runnerApi/campaign';
import { RATE_BOUNDS } from '../../../shared/runnerRoutes';
import { identifierField, templateVariablesField } from '../../descriptions/common.description';
import { BUSINESS_NUMBER_LABEL } from '../../helpers/phone';

/** The longest wait a user can set: an execution should not hold a worker for more than an hour. */
export const MAX_WAIT_SECONDS = 3600;

const properties: INodeProperties[] = [
	{
		displayName:
			'All input items become the recipients of ONE campaign, which the runner sends at the given rate, durably, ' +
			'never twice to a recipient. Rows it cannot use (a bad phone, a duplicate) ' +
			'come back under "rejections" with their item index; the others are sent.',
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
		description:
			"Shown beside the campaign ID in the runner's lists, " +
			`its console and Campaign ID → From List (1 to ${CAMPAIGN_NAME_MAX} characters, ` +
			"one line). Empty: the workflow's name.",
	},
	identifierField({
		displayName: 'Template ID',
		name: 'templateId',
		description:
			'ID of an approved template of the business whose API key the runner uses, ' +
			'shown with the template in the Convo dashboard',
	}),
	{
		displayName: BUSINESS_NUMBER_LABEL,
		name: 'fromPhoneNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. +49 30 1234567',
		description:
			'Business phone number the campaign is sent from, with country code. The runner keeps one rate per number.',
	},
	{
		displayName: 'Rate (Sends per Second)',
		name: 'rate',
		type: 'number',
		typeOptions: { minValue: RATE_BOUNDS.min, maxValue: RATE_BOUNDS.max },
		default: 60,
		description:
			'How many messages per second the runner sends for this campaign ' +
			'(campaigns on one number share the strictest rate)',
	},
	{
		displayName: 'Phone',
		name: 'phone',
		type: 'string',
		required: true,
		default: '={{ $json.phone }}',
		placeholder: 'e.g. +49 151 12345678',
		description:
			'Recipient of each item, with country code (read per item: ' +
			'the default takes the item\'s "phone" field). Spaces, dashes and a leading + are fine; ' +
			'a bad or repeated number rejects that item only.',
	},
	{
		displayName: 'Define Variables Using',
		name: 'defineUsing',
		type: 'options',
		options: [
			{ name: 'Fields Below', value: 'fields', description: 'Map each template variable to a value of the item' },
			{
				name: 'JSON',
				value: 'json',
				description: "Give each item's variables as one JSON object, as AI agents and mapped data do best",
			},
		],
		default: 'fields',
		description: 'How the template variables of each recipient are given',
	},
	templateVariablesField(
		'Template variables of each recipient, read per item: ' +
			'name "1", "2", ... for positional variables or the variable name, ' +
			'and a value mapped from the item (e.g. the first_name field).',
		'Text that replaces the variable for this recipient',
	),
	{
		displayName: 'Variables (JSON)',
		name: 'variablesJson',
		type: 'json',
		default: '{}',
		description:
			'Template variables of each recipient as one JSON object (read per item): ' +
			'{"1": "Ada"} for positional variables, {"first_name": "Ada"} for named ones',
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
			{
				displayName: 'A/B Test: Decide After',
				name: 'abDecideAfter',
				type: 'string',
				default: '2h',
				description:
					'With other variants: when the rule decides at the latest (e.g. 2h, 30m, 90s); earlier once ' +
					"every test message's delivery settled",
			},
			{
				displayName: 'A/B Test: If Tie',
				name: 'abIfTie',
				type: 'options',
				options: [
					{ name: 'Send the First Variant', value: 'first' },
					{ name: "Wait for the Operator's Choice", value: 'wait' },
				],
				default: 'first',
				description:
					'With other variants: what happens when no variant wins beyond chance (convo-runner campaign choose decides)',
			},
			{
				displayName: 'A/B Test: Other Variants',
				name: 'abVariants',
				type: 'string',
				typeOptions: { rows: 3 },
				default: '',
				placeholder: 'e.g. 9a41c2d0-…:first_name,city',
				description:
					'An A/B test of templates: the Template ID above is variant 1; give 1 to 4 more, one a line, each a ' +
					'template ID, then optionally a colon and the variables it uses (every item needs them). A share of ' +
					'the items (A/B Test: Share) is split evenly among the variants; the best by the chosen rate wins ' +
					'by a stated rule and the rest of the items get it.',
			},
			{
				displayName: 'A/B Test: Pick By',
				name: 'abPickBy',
				type: 'options',
				options: [
					{ name: 'Read Rate', value: 'read' },
					{ name: 'Replied Rate', value: 'replied' },
					{ name: 'Delivered Rate', value: 'delivered' },
				],
				default: 'read',
				description: 'With other variants: the rate the winner is chosen by',
			},
			{
				displayName: 'A/B Test: Share',
				name: 'abTestShare',
				type: 'string',
				default: '10%',
				description: 'With other variants: the share of the items the variants split, 1% to 90%',
			},
			identifierField({
				displayName: 'Agent ID',
				name: 'agentId',
				description:
					'ID of an agent of the business to assign to each conversation: id in the output of Agent → Create, ' +
					'or shown with the agent in the Convo dashboard',
				required: false,
			}),
			{
				displayName: 'Campaign Key',
				name: 'campaignKey',
				type: 'string',
				default: '',
				placeholder: 'e.g. spring-sale-2026-03-01',
				description:
					'Names this campaign so that it is sent once: within 24 h, ' +
					'running this node again with the same key returns the first campaign instead of a second. Empty: ' +
					'the key is this workflow, this node, the settings and every row, ' +
					'so a Retry or another execution of the same input never sends twice. Set a new key to send the same ' +
					'content again on purpose.',
			},
			{
				displayName: 'End Time',
				name: 'endAt',
				type: 'dateTime',
				default: '',
				description:
					'When the campaign ends: recipients still unsent then are counted Expired, never sent, ' +
					"and the campaign completes. A time without an offset is read in the workflow's time zone: " +
					'one the clocks skip that day (daylight saving) is refused, one they show twice is the first.',
			},
			{
				displayName: 'Send Window',
				name: 'window',
				type: 'string',
				default: '',
				placeholder: 'e.g. 09:00-20:00, or mon-fri 09:00-20:00, sat 10:00-14:00',
				description:
					"Send only within these hours in each recipient's local time; " +
					"recipients wait while theirs is closed. The time zone is the item's variable named tz " +
					'(an IANA name such as Europe/Berlin; with a window it is not sent as a variable) ' +
					"or else the phone's country (a country of several zones: " +
					'only while the window is open in all of them).',
			},
			{
				displayName: 'Start Time',
				name: 'startAt',
				type: 'dateTime',
				default: '',
				description:
					'When the runner starts sending; empty starts at once. A time without an offset is read in the ' +
					"workflow's time zone: one the clocks skip that day (daylight saving) is refused, " +
					'one they show twice is the first.',
			},
			{
				displayName: 'Test Send To',
				name: 'testTo',
				type: 'string',
				default: '',
				placeholder: 'e.g. +49 151 12345678',
				description:
					"Your own phone: before the campaign starts, the first recipient's message (same template, variables, " +
					'number and agent) is sent here, and the campaign starts only if the service accepts it. A wrong ' +
					'template or number then fails this node and nobody is sent. The test is no recipient: ' +
					'it is in no count or report.',
			},
			{
				displayName: 'When Capped',
				name: 'whenCapped',
				type: 'options',
				options: [
					{
						name: 'Skip (Outcome Capped)',
						value: 'skip',
						description: 'Not sent; its outcome is capped, with the time it would next be allowed',
					},
					{
						name: 'Wait Until Allowed',
						value: 'wait',
						description: 'Stays pending and is sent once the cap allows it; the campaign completes after that',
					},
				],
				default: 'skip',
				description:
					"What becomes of a recipient the runner's frequency cap holds back " +
					'(at most N campaign messages per phone per period, across campaigns: convo-runner cap set)',
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
				description:
					'Whether to only check the items as the campaign would, without creating or sending anything: ' +
					'the node answers the counts (accepted, rejected), the reasons, ' +
					'the first rejections with their item index and the estimated duration. One item is answered whatever ' +
					`Output says; no test send, no waiting. At most ${CREATE_ROWS_MAX.toLocaleString('en-US')} items.`,
			},
			{
				displayName: 'Max Wait (Seconds)',
				name: 'maxWaitSeconds',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: MAX_WAIT_SECONDS },
				default: 60,
				description:
					'With Wait for Completion: how long the node waits at most. Past it the node answers the campaign as ' +
					'it is then, with wait_timed_out true; the campaign goes on at the runner.',
			},
			{
				displayName: 'Output',
				name: 'output',
				type: 'options',
				options: [
					{
						name: 'The Campaign',
						value: 'campaign',
						description: 'ONE item: campaign_id, state, totals and the rejected rows',
					},
					{
						name: 'Each Input Item With Its Outcome',
						value: 'recipients',
						description:
							'One item per input item: its own fields plus "campaign" (campaign_id, outcome, message_ID, error, ' +
							'attempts), so results join back to the customer. Use with Wait for Completion for final outcomes.',
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
					'Whether these messages are not marketing (order updates, one-time codes): ' +
					'the campaign then sends to phones on the suppression list too. Shown as transactional on the campaign.',
			},
			{
				displayName: 'Wait for Completion',
				name: 'waitForCompletion',
				type: 'boolean',
				default: false,
				description:
					'Whether the node waits until the campaign has completed, failed or been cancelled (at most Max Wait), ' +
					'reading its status every second; suits small lists. Progress shows in the browser ' +
					'console of a manual execution.',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['campaign'], operation: ['create'] } },
	properties,
);

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
	variants: 'additionalFields.abVariants',
	test_share: 'additionalFields.abTestShare',
	pick_by: 'additionalFields.abPickBy',
	decide_after: 'additionalFields.abDecideAfter',
	if_tie: 'additionalFields.abIfTie',
	recipients: 'phone',
};
