/**
 * What goes over convo-runner's control API, as zod schemas: the bodies the node pack sends (the
 * runner checks them with these same schemas) and the answers it reads. Answers are loose: they
 * name the fields a client may rely on, and a runner may add others. The node types its answers
 * with z.infer of these; test/runner/apiContract.test.ts parses real answers with them.
 */
import { z } from 'zod/v4';

import { RUNNER_EVENTS } from './runner';
import { RATE_BOUNDS, RECIPIENTS_PER_CHUNK, RUNNER_ID_PATTERN, type RunnerRouteName } from './runnerRoutes';

/** The `:id` of a route; `what` names the thing in the error ("must be a campaign id"). */
export const runnerIdParams = (what: string) =>
	z.object({ id: z.string().regex(RUNNER_ID_PATTERN, { error: `must be a ${what} id` }) });

/**
 * Sends or upserts per second: a whole number within RATE_BOUNDS, the one rule of every rate a
 * client sets (the API's bodies, the runner's CLI). The messages say the rule; whoever reports one
 * puts the setting's name in front, as the client calls it (`rate`, `--rate`). `fromText`: a query
 * string's text is read as a number first.
 */
export const runnerRate = (unit: 'send' | 'upsert', { fromText = false } = {}) =>
	(fromText ? z.coerce.number({ error: 'must be a number' }) : z.number({ error: 'must be a number' }))
		.int({ error: `must be a whole number of ${unit}s per second` })
		.min(RATE_BOUNDS.min, { error: `must be at least ${RATE_BOUNDS.min} ${unit} per second` })
		.max(RATE_BOUNDS.max, { error: `may be at most ${RATE_BOUNDS.max} ${unit}s per second` });

/** A campaign's states; `draft`: created to be filled in chunks, nothing is sent until it is started. */
export const CAMPAIGN_STATES = ['draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled', 'failed'] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

/**
 * What became of a recipient, as reports and counts show it; `suppressed`: its phone is on the
 * business's suppression list (never sent); `expired`: unsent when its campaign ended; `capped`:
 * over the frequency cap at its claim.
 */
export const RECIPIENT_OUTCOMES = [
	'pending',
	'claimed',
	'sent',
	'failed',
	'rejected',
	'cancelled',
	'unknown',
	'not_sent',
	'expired',
	'suppressed',
	'capped',
] as const;
export type RecipientOutcome = (typeof RECIPIENT_OUTCOMES)[number];

/** GET /api/campaigns/:id/report: a page of rows, as JSON or CSV, only some outcomes if asked. */
/**
 * POST /api/campaigns/:id/retry-undelivered (and `campaign retry --undelivered`): send again only
 * the recipients whose delivery the service proved failed; `reason` a substring of the failure's
 * reason (any case), `after` how long ago it failed at least (30s, 15m, 2h, 1d).
 */
export const retryUndeliveredBody = z.object({
	reason: z
		.string({ error: 'must be text' })
		.trim()
		.min(1, { error: 'must not be empty: a part of the failure reason to match' })
		.optional(),
	after: z
		.string({ error: 'must be a duration' })
		.regex(/^\d+(s|m|h|d)$/, { error: 'must be a duration like 30s, 15m, 2h or 1d' })
		.transform(
			(text) => Number(text.slice(0, -1)) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[text.slice(-1) as 's'],
		)
		.optional(),
});
export type RetryUndeliveredBody = z.input<typeof retryUndeliveredBody>;

/** The report's filter of recipients whose message was sent and whose delivery failed. */
export const FAILED_DELIVERY = 'failed-delivery';

export const campaignReportQuery = z.object({
	format: z.enum(['json', 'csv']).default('json'),
	/** Rows to skip (after the outcome filter) and the most to return: a page of the report. */
	offset: z.coerce.number().int().min(0).default(0),
	limit: z.coerce.number().int().min(1).max(100_000).optional(),
	/** Only rows with this outcome (several separated by commas); `failed-delivery`: sent, and its delivery failed. */
	outcome: z
		.string()
		.transform((text) =>
			text
				.split(',')
				.map((part) => part.trim())
				.filter(Boolean),
		)
		.pipe(
			z.array(
				z.enum([...RECIPIENT_OUTCOMES, FAILED_DELIVERY], {
					error: `must be one of ${[...RECIPIENT_OUTCOMES, FAILED_DELIVERY].join(', ')}`,
				}),
			),
		)
		.optional(),
	/** Only this recipient's row, by phone as typed (normalised as the create does); 404 when not in the campaign. */
	phone: z.string().optional(),
});
export type CampaignReportQuery = z.input<typeof campaignReportQuery>;

/** Rows like a CSV's: phone, optional buttons, variables (each row is checked by the runner, one by one). */
const recipientRows = z.array(z.record(z.string(), z.unknown()));

/** The longest campaign name: it is read in lists and dropdowns, not a description. */
export const CAMPAIGN_NAME_MAX = 120;
// C0 controls, DEL and C1 controls: a name is one line of text in a list, a table or a dropdown.
// eslint-disable-next-line no-control-regex -- the control characters are what this rule finds
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A campaign's name as a person gives it: trimmed, 1 to CAMPAIGN_NAME_MAX characters, one line
 * (no control characters). Whoever reports a broken rule puts the setting's name in front
 * (`--name`, `name`, Campaign Name).
 */
export const campaignName = z
	.string({ error: 'must be text' })
	.trim()
	.min(1, { error: `must be 1 to ${CAMPAIGN_NAME_MAX} characters (it is empty)` })
	.max(CAMPAIGN_NAME_MAX, { error: `must be 1 to ${CAMPAIGN_NAME_MAX} characters` })
	.refine((name) => !CONTROL_CHARACTERS.test(name), {
		error: 'must be one line of text, without control characters (tabs, line breaks)',
	});

/**
 * Text made to fit as a campaign name when no person gave one (a file's or a workflow's name):
 * control characters become spaces, runs of spaces one, cut to CAMPAIGN_NAME_MAX; undefined when
 * nothing is left.
 */
export function fitCampaignName(text: string): string | undefined {
	const fitted = text
		.replace(new RegExp(CONTROL_CHARACTERS.source, 'g'), ' ')
		.replace(/\s+/g, ' ')
		.trim()
		.slice(0, CAMPAIGN_NAME_MAX)
		.trim();
	return fitted === '' ? undefined : fitted;
}

/** Settings of a campaign create: JSON body fields, or the query of a CSV/NDJSON upload (so rate may come as text). */
export const campaignSettingsInput = z.object({
	/** Shown in lists beside the id; by default the source's file name (or "Upload" and the time). */
	name: campaignName.optional(),
	template_id: z.string(),
	from: z.string(),
	agent_id: z.string().optional(),
	rate: runnerRate('send', { fromText: true }).optional(),
	at: z.string().optional(),
	cron: z.string().optional(),
	tz: z.string().optional(),
	/** A CSV's delimiter (comma, semicolon or tab); the runner tells it from the header line when absent. */
	delimiter: z.string().optional(),
	/**
	 * A test phone: the first accepted row's message goes there first, and the campaign starts only
	 * if the service accepts it (a draft: at its start).
	 */
	test_to: z.string().optional(),
	/**
	 * A send window in each recipient's local time: `09:00-20:00`,
	 * or day groups such as `mon-fri 09:00-20:00, sat 10:00-14:00`.
	 */
	window: z.string().optional(),
	/** The campaign's end (ISO 8601): recipients still unsent then are `expired`, and the campaign finishes. */
	end_at: z.string().optional(),
	/**
	 * A recipient over the frequency cap: `skip` (the default) writes
	 * it capped; `wait` keeps it pending until the cap allows it.
	 */
	when_capped: z.enum(['skip', 'wait'], { error: 'must be skip or wait' }).optional(),
});

/** The query string of a CSV/NDJSON upload to POST /api/campaigns: the settings, and `dry_run=true` for a dry run. */
export const campaignUploadQuery = campaignSettingsInput.extend({
	dry_run: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
	transactional: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
});

/** The most rows a JSON create (or its dry run) carries; more go as an upload or a draft's chunks. */
export const CREATE_ROWS_MAX = 100_000;

/** POST /api/campaigns as JSON. */
export const createCampaignBody = campaignSettingsInput.extend({
	recipients: recipientRows.max(CREATE_ROWS_MAX).optional(),
	/** An http(s) URL the runner reads (and a cron schedule re-reads). */
	source_url: z.url({ protocol: /^https?$/ }).optional(),
	/** Create a draft: filled by POST /api/campaigns/:id/recipients, sent once started. */
	draft: z.boolean().optional(),
	/** Check every row as the create would and answer the counts; nothing is stored or sent. */
	dry_run: z.boolean().optional(),
	/** Not marketing (an order update, a one-time code): sent to phones on the suppression list too. */
	transactional: z.boolean().optional(),
});
export type CreateCampaignBody = z.input<typeof createCampaignBody>;

/** POST /api/campaigns/:id/recipients: one chunk of a draft's rows. */
export const addRecipientsBody = z.object({
	recipients: recipientRows.max(RECIPIENTS_PER_CHUNK, {
		error: `may hold at most ${RECIPIENTS_PER_CHUNK} rows per chunk`,
	}),
	/** The line of the chunk's first row (later rows follow); by default the next after the rows already added. */
	first_line: z.int().min(1).optional(),
});
export type AddRecipientsBody = z.input<typeof addRecipientsBody>;

/** PUT /api/campaigns/:id/rate. */
export const setCampaignRateBody = z.object({ rate: runnerRate('send') });

/** POST /api/reindex. */
export const startReindexBody = z.object({
	collection_id: z.uuid({ error: 'must be the UUID of a search collection' }),
	/** An http(s) URL, or a file inside RUNNER_SOURCE_DIR (a relative path is taken from it). */
	source: z.string(),
	format: z.enum(['json', 'ndjson', 'csv']).optional(),
	id_field: z.string().min(1, { error: 'must name the field that holds each item id' }),
	embedding_json: z.record(z.string(), z.unknown()).optional(),
	deactivate_missing: z.boolean().optional(),
	force: z.boolean().optional(),
	/**
	 * With deactivate_missing: "10%" of the collection's active items (the default) or a number of
	 * items; more stops the run before it deactivates. The runner checks the value.
	 */
	max_deactivate: z.union([z.string(), z.number()]).optional(),
	/** With deactivate_missing: deactivate however many that is. */
	force_deactivate: z.boolean().optional(),
	/** Answer what a run would do (counts, rejected rows, the wipe guard's verdict), writing nothing. */
	dry_run: z.boolean().optional(),
	rate: runnerRate('upsert').optional(),
	cron: z.string().optional(),
	tz: z.string().optional(),
});
export type StartReindexBody = z.input<typeof startReindexBody>;

/** POST /api/webhooks. */
export const createWebhookBody = z.object({
	url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
	events: z
		.array(z.enum(RUNNER_EVENTS, { error: `must be one of ${RUNNER_EVENTS.join(', ')}` }))
		.min(1, { error: `must list at least one event (${RUNNER_EVENTS.join(', ')})` }),
	description: z.string().max(500, { error: 'may be at most 500 characters' }).optional(),
});

/** POST /api/webhooks/:id/receipts. */
export const recordReceiptBody = z.object({
	event_id: z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/, { error: 'must be the id of a runner event (ev-…)' }),
});

const count = z.int().min(0);
const campaignState = z.enum(CAMPAIGN_STATES);

/** A campaign as GET /api/campaigns/:id shows it (and a draft's start answers it). */

export type CampaignAnswer = z.infer<typeof campaignAnswer>;

/** What a create with test_to (or a draft's start) says of its test send; a refused one is an error answer. */
const testSendAnswer = z.looseObject({ to: z.string(), accepted: z.literal(true), message_id: z.string().optional() });

/** POST /api/campaigns with draft: true (the node's create; other creates answer more). */
export const createCampaignAnswer = z.looseObject({
	id: z.string(),
	name: z.string(),
	state: campaignState,
	test_send: testSendAnswer.optional(),
});

/** How a campaign's delivery is known: A1 (messaging API), B7 only (cannot tell delivered from sent), or not at all. */
export const TRACKING_MODES = ['messaging_api', 'conversations_only', 'off'] as const;

/**
 * A campaign's funnel: audience -> accepted -> sent -> delivered -> read -> replied, failed
 * deliveries by reason; `rates` are shares of `sent` (0..1, 3 decimals); `in_flight` is sent and
 * neither delivered nor failed yet; `settled` once every sent message is final or its checks ran out.
 */
export const campaignFunnel = z.looseObject({
	audience: count,
	accepted: count,
	sent: count,
	delivered: count,
	read: count,
	replied: count,
	failed_delivery: count,
	in_flight: count,
	failed_reasons: z.array(z.looseObject({ reason: z.string(), count })),
	rates: z.looseObject({ delivered: z.number(), read: z.number(), replied: z.number(), failed_delivery: z.number() }),
	tracking: z.enum(TRACKING_MODES),
	settled: z.boolean(),
});
export type CampaignFunnel = z.infer<typeof campaignFunnel>;

/** GET /api/campaigns/:id (what the node's Campaign -> Get returns): the status, settings and funnel. */
export const campaignAnswer = z.looseObject({
	id: z.string(),
	name: z.string(),
	state: campaignState,
	total: count,
	created_at: z.iso.datetime(),
	funnel: campaignFunnel.optional(),
});

/** One campaign of GET /api/campaigns: what a list shows of it (the console's table, the node's From List). */
export const campaignListItem = z.looseObject({
	id: z.string(),
	name: z.string(),
	state: campaignState,
	created_at: z.iso.datetime(),
	template_id: z.string(),
	from: z.string(),
	total: count,
	counts: z.record(z.enum(RECIPIENT_OUTCOMES), count),
});
export type CampaignListItem = z.infer<typeof campaignListItem>;

/** GET /api/campaigns: a page of campaigns, newest first. */
export const campaignListAnswer = z.looseObject({
	items: z.array(campaignListItem),
	total: count,
	limit: count,
	offset: count,
});
export type CreateCampaignAnswer = z.infer<typeof createCampaignAnswer>;

const rejection = z.looseObject({ line: z.int().min(1), phone: z.string(), reason: z.string() });

/** POST /api/campaigns/:id/recipients: this chunk (`added`, each rejected row listed) and the whole draft so far. */
export const addRecipientsAnswer = z.looseObject({
	id: z.string(),
	state: campaignState,
	added: z.looseObject({ total: count, accepted: count, rejected: count, rejections: z.array(rejection) }),
	total: count,
	accepted: count,
	rejected: count,
});
export type AddRecipientsAnswer = z.infer<typeof addRecipientsAnswer>;

/** POST .../pause, .../resume, .../cancel (cancel adds how many recipients it cancelled). */
export const campaignControlAnswer = z.looseObject({ id: z.string(), state: campaignState });
export type CampaignControlAnswer = z.infer<typeof campaignControlAnswer>;

/** One row of GET /api/campaigns/:id/report?format=json, in source order. */
export const reportRow = z.looseObject({
	line: z.int().min(1),
	phone: z.string(),
	outcome: z.enum(RECIPIENT_OUTCOMES),
});
export const campaignReportAnswer = z.array(reportRow);
export type ReportRow = z.infer<typeof reportRow>;

/** A reindex run's status (GET /api/reindex/:id, and POST /api/reindex with kind "run"). */
export const reindexRunAnswer = z.looseObject({
	id: z.string(),
	state: z.string(),
	counts: z.record(z.string(), z.number()),
});
export type ReindexRunAnswer = z.infer<typeof reindexRunAnswer>;

/** POST /api/reindex: a run, with cron a schedule, or with dry_run what a run would do. */
export const startReindexAnswer = z.union([
	reindexRunAnswer.extend({ kind: z.literal('run') }),
	z.looseObject({ kind: z.literal('dry_run'), counts: z.record(z.string(), z.number()), deactivation: z.string() }),
	z.looseObject({ kind: z.literal('schedule'), schedule: z.looseObject({ id: z.string() }) }),
]);
export type StartReindexAnswer = z.infer<typeof startReindexAnswer>;

/** Where an entry of the suppression list came from. */
export const SUPPRESSION_SOURCES = ['keyword', 'operator', 'workflow', 'import'] as const;

/** POST /api/suppressions: put a phone on the list (`source` operator unless a workflow says so). */
export const addSuppressionBody = z.object({
	phone: z.string({ error: 'must be a phone number with country code' }),
	reason: z.string({ error: 'must be text' }).max(200, { error: 'may be at most 200 characters' }).optional(),
	source: z.enum(['operator', 'workflow'], { error: 'must be operator or workflow' }).optional(),
});
export type AddSuppressionBody = z.input<typeof addSuppressionBody>;

/** GET /api/suppressions: a page of the list, newest first. */
export const listSuppressionsQuery = z.object({
	limit: z.coerce.number().int().min(1).max(1000).default(100),
	offset: z.coerce.number().int().min(0).default(0),
});

/** An entry of the suppression list. */
export const suppressionEntry = z.looseObject({
	phone: z.string(),
	reason: z.string(),
	source: z.enum(SUPPRESSION_SOURCES),
	at: z.iso.datetime(),
});
export type SuppressionEntry = z.infer<typeof suppressionEntry>;
/** GET /api/suppressions/:id (the id is the phone): whether it is on the list, and its entry when it is. */
export const suppressionCheckAnswer = z.looseObject({
	phone: z.string(),
	suppressed: z.boolean(),
	entry: suppressionEntry.nullable(),
});
export type SuppressionCheckAnswer = z.infer<typeof suppressionCheckAnswer>;
/**
 * POST /api/suppressions: the entry, and whether this call added it (false: the phone was there, its first entry kept).
 */
export const addSuppressionAnswer = suppressionEntry.extend({ added: z.boolean() });
export type AddSuppressionAnswer = z.infer<typeof addSuppressionAnswer>;
export const removeSuppressionAnswer = z.looseObject({ phone: z.string(), removed: z.boolean() });
export type RemoveSuppressionAnswer = z.infer<typeof removeSuppressionAnswer>;
export const suppressionListAnswer = z.looseObject({
	items: z.array(suppressionEntry),
	total: count,
	limit: count,
	offset: count,
});
export type SuppressionListAnswer = z.infer<typeof suppressionListAnswer>;

/** A webhook registration; the create's answer alone holds the signing secret. */
export const webhookAnswer = z.looseObject({ id: z.string(), url: z.string(), events: z.array(z.enum(RUNNER_EVENTS)) });
export type WebhookAnswer = z.infer<typeof webhookAnswer>;
export const createWebhookAnswer = webhookAnswer.extend({ secret: z.string() });
export type CreateWebhookAnswer = z.infer<typeof createWebhookAnswer>;

/** POST /api/webhooks/:id/receipts: `first` is true for the one call that recorded the event. */
export const recordReceiptAnswer = z.looseObject({ event_id: z.string(), first: z.boolean() });
export type RecordReceiptAnswer = z.infer<typeof recordReceiptAnswer>;

/** The answer each route gives on success, for clients and for the test that holds the runner to them. */
export const RUNNER_ANSWERS = {
	createCampaign: createCampaignAnswer,
	getCampaign: campaignAnswer,
	listCampaigns: campaignListAnswer,
	addRecipients: addRecipientsAnswer,
	startCampaign: campaignAnswer.extend({ test_send: testSendAnswer.optional() }),
	pauseCampaign: campaignControlAnswer,
	resumeCampaign: campaignControlAnswer,
	cancelCampaign: campaignControlAnswer,
	setCampaignRate: z.looseObject({ id: z.string(), rate: runnerRate('send') }),
	campaignReport: campaignReportAnswer,
	startReindex: startReindexAnswer,
	getReindexRun: reindexRunAnswer,
	createWebhook: createWebhookAnswer,
	getWebhook: webhookAnswer,
	recordReceipt: recordReceiptAnswer,
	addSuppression: addSuppressionAnswer,
	removeSuppression: removeSuppressionAnswer,
	checkSuppression: suppressionCheckAnswer,
	listSuppressions: suppressionListAnswer,
} satisfies Partial<Record<RunnerRouteName, z.ZodType>>;
