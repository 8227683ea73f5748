/**
 * A campaign over the runner's control API (/api/campaigns): its states and what became of each
 * recipient, the name, the create's settings and rows (JSON, an upload's query, a draft's chunks),
 * the rate, the report's page, retrying undelivered recipients; and the answers the node reads.
 */
import { z } from 'zod/v4';

import { RECIPIENTS_PER_CHUNK } from '../runnerRoutes';
import { count, runnerPage, runnerRate } from './common';

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
 * control characters become spaces, consecutive spaces one, cut to CAMPAIGN_NAME_MAX; undefined when
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
	template_id: z.string().optional(),
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
	/**
	 * An A/B test: 2 to 5 variants, each `<template id>[:var1,var2]` (the variables its template
	 * uses); `template_id` may then be left out (the first variant's). In an upload's query, repeat
	 * `variants=`.
	 */
	variants: z.union([z.array(z.string()), z.string().transform((one) => [one])]).optional(),
	/** An A/B test's share of the accepted audience the variants split: `20%` or `0.2`. */
	test_share: z.union([z.string(), z.number()]).optional(),
	/** The rate the winner is chosen by (default read). */
	pick_by: z.enum(['read', 'replied', 'delivered'], { error: 'must be read, replied or delivered' }).optional(),
	/** When the rule decides at the latest, from the start: `2h`, `30m`, `90s`. */
	decide_after: z.string().optional(),
	/** No winner beyond chance: send the first variant (default) or wait for the operator's choice. */
	if_tie: z.enum(['first', 'wait'], { error: 'must be first or wait' }).optional(),
	/** The split's seed (hex), as a dry run answered it: the create splits alike. */
	seed: z.string().optional(),
	/** The rule's minimum of sends per variant (default 50). */
	min_per_variant: z.union([z.number(), z.string()]).optional(),
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

/** POST /api/campaigns/:id/choose: an A/B test's winner chosen by the operator, by number or template id. */
export const chooseVariantBody = z.object({
	variant: z.union([z.int().min(1).max(5), z.string().min(1).max(100)]),
});
export const chooseVariantAnswer = z.object({ id: z.string(), variant: z.int(), template_id: z.string() });

/** PUT /api/campaigns/:id/rate. */
export const setCampaignRateBody = z.object({ rate: runnerRate('send') });

/** The report's filter of recipients whose message was sent and whose delivery failed. */
export const FAILED_DELIVERY = 'failed-delivery';

/** GET /api/campaigns/:id/report: a page of rows, as JSON or CSV, only some outcomes if asked. */
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

const campaignState = z.enum(CAMPAIGN_STATES);

/** What a create with test_to (or a draft's start) says of its test send; a refused one is an error answer. */
const testSendAnswer = z.looseObject({ to: z.string(), accepted: z.literal(true), message_id: z.string().optional() });

/** POST /api/campaigns with draft: true (the node's create; other creates answer more). */
export const createCampaignAnswer = z.looseObject({
	id: z.string(),
	name: z.string(),
	state: campaignState,
	test_send: testSendAnswer.optional(),
});
export type CreateCampaignAnswer = z.infer<typeof createCampaignAnswer>;

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
	/** The template's name as the service named it in the first accepted send; null before that. */
	template_name: z.string().nullable(),
	funnel: campaignFunnel.optional(),
});
export type CampaignAnswer = z.infer<typeof campaignAnswer>;

/** POST /api/campaigns/:id/start: the draft's status as GET shows it, and its test send if it made one. */
export const startCampaignAnswer = campaignAnswer.extend({ test_send: testSendAnswer.optional() });

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
export const campaignListAnswer = runnerPage(campaignListItem);

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

/** DELETE /api/campaigns/:id: the finished campaign is gone, with its recipients and report. */
export const deleteCampaignAnswer = z.looseObject({ id: z.string(), deleted: z.literal(true) });

/** PUT /api/campaigns/:id/rate: the rate the campaign now sends at. */
export const setCampaignRateAnswer = z.looseObject({ id: z.string(), rate: runnerRate('send') });

/** One row of GET /api/campaigns/:id/report?format=json, in source order. */
export const reportRow = z.looseObject({
	line: z.int().min(1),
	phone: z.string(),
	outcome: z.enum(RECIPIENT_OUTCOMES),
});
export type ReportRow = z.infer<typeof reportRow>;
export const campaignReportAnswer = z.array(reportRow);
