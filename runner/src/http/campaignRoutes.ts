/**
 * The campaign routes of the control API: thin over its doors in core/. Recipients come as inline JSON rows,
 * as a CSV or NDJSON request body streamed to the parser, or as a source URL; or a draft is
 * created and filled a chunk at a time (POST .../recipients), then started.
 */
import { Readable } from 'node:stream';

import { z } from 'zod/v4';

import {
	addRecipientsBody,
	CAMPAIGN_STATES,
	campaignFunnel,
	campaignReportQuery,
	campaignUploadQuery,
	chooseVariantAnswer,
	chooseVariantBody,
	createCampaignAnswer,
	createCampaignBody,
	FAILED_DELIVERY,
	RECIPIENT_OUTCOMES,
	RECIPIENTS_PER_CHUNK,
	retryUndeliveredBody,
	runnerIdParams,
	setCampaignRateBody,
	type RetryUndeliveredBody,
} from 'convo-contract';
import type { RunnerContext } from '../context';
import * as audience from '../core/audience';
import * as campaigns from '../core/campaigns';
import {
	API_NAMES,
	getCampaign,
	inlineRecords,
	parseRecords,
	type Outcome,
	type SourceFormat,
	type SourceRecord,
} from '../core/campaigns';
import { at, cronScheduleAnswer, InputError, type RouteTable } from './routes';
import { receiveUpload } from './uploads';

const id = runnerIdParams('campaign');
const settings = campaignUploadQuery;
const createBody = createCampaignBody;

const reportQuery = campaignReportQuery;

const count = z.int().min(0);
const state = z.enum(CAMPAIGN_STATES);
/** The answers of the routes the node pack does not call (the contract holds the others'). */
const requeuedAnswer = z.object({ id: z.string(), state, requeued: count });
const reconcileAnswer = z.object({
	id: z.string(),
	checked: count,
	sent: count,
	not_sent: count,
	still_unknown: count,
});
const capAnswer = z.object({
	from: z.string(),
	policy: z.string(),
	source: z.enum(['number', 'default', 'none']),
	number_policy: z.string().nullable(),
	default_policy: z.string().nullable(),
});
const dailyCountsAnswer = z.object({
	from: z.string(),
	days: z.array(z.object({ date: z.iso.date(), sent: count, failed: count })),
});
const errorGroups = z.array(
	z.object({ outcome: z.enum(RECIPIENT_OUTCOMES), reason: z.string(), count, varies: z.boolean() }),
);
const rejections = z.array(z.object({ line: z.int().min(1), phone: z.string(), reason: z.string() }));
/** A cron schedule as a create with cron answers it (campaigns/schedule.ts scheduleView). */
const scheduleSettingsAnswer = cronScheduleAnswer.extend({
	name: z.string(),
	template_id: z.string(),
	from: z.string(),
	agent_id: z.string().nullable(),
	rate_limit: z.number(),
	source: z.string(),
	format: z.string().nullable(),
	delimiter: z.string().nullable(),
	transactional: z.boolean(),
	when_capped: z.enum(['skip', 'wait']),
});
/** A create's answer: the campaign with its rows' counts, the cron schedule, or what a dry run found. */
const createAnswer = z.union([
	createCampaignAnswer.extend({
		kind: z.literal('campaign'),
		total: count,
		accepted: count,
		rejected: count,
		suppressed: count,
		rejections,
	}),
	z.looseObject({
		kind: z.literal('schedule'),
		schedule: scheduleSettingsAnswer,
	}),
	z.looseObject({
		kind: z.literal('dry_run'),
		dry_run: z.literal(true),
		counts: z.looseObject({
			accepted: count,
			rejected: count,
			suppressed: count,
			capped: count,
			expired: count.optional(),
		}),
		estimate: z.looseObject({ rate: z.number(), seconds: z.number(), starts_at: z.string(), ends_at: z.string() }),
		// With test_to: not sent; `held` names the rule that would refuse the test, in the refusal's words.
		test_send: z
			.object({ to: z.string(), sent: z.literal(false), held: z.string().optional(), note: z.string() })
			.optional(),
	}),
]);
/** A cron schedule as the schedule routes answer it (core/campaigns.ts scheduleDetail). */
const scheduleId = runnerIdParams('campaign schedule');
const scheduleAnswer = scheduleSettingsAnswer.extend({
	funnel: campaignFunnel,
	run_count: count,
	runs: z.array(z.object({ id: z.string(), name: z.string(), state, created_at: z.string() })),
});
/** [epoch second, sends in it] for each of the last seconds. */
const rateHistoryAnswer = z.array(z.tuple([z.int(), count]));

const UPLOAD_TYPES: Record<string, SourceFormat> = {
	'text/csv': 'csv',
	'application/x-ndjson': 'ndjson',
	'application/ndjson': 'ndjson',
};

/** The Idempotency-Key header; repeated, it is not one key, so it is ignored as before. */
const idempotencyKey = (header: string | string[] | undefined) => (typeof header === 'string' ? header : undefined);

export function campaignRoutes(routes: RouteTable, context: RunnerContext): void {
	routes.add(
		{
			...at('createCampaign'),
			tag: 'campaigns',
			summary:
				'Create a campaign: JSON with recipients or source_url, ' +
				'or a CSV/NDJSON body with the settings in the query; ' +
				'Idempotency-Key makes a retry return the first campaign. ' +
				'dry_run: true (dry_run=true in the query of an upload) checks every row and answers counts, reasons, ' +
				'first rejections and an estimate, storing and sending nothing (200)',
			body: createBody,
			query: settings.partial(),
			consumes: ['application/json', ...Object.keys(UPLOAD_TYPES)],
			success: [201, 'the campaign (or, with cron, the schedule); rows rejected with their line and reason'],
			answer: createAnswer,
		},
		async ({ request, reply }) => {
			const type = String(request.headers['content-type'] ?? '')
				.split(';')[0]
				.trim()
				.toLowerCase();
			const upload = UPLOAD_TYPES[type];
			let fields: Omit<z.output<typeof settings>, 'dry_run' | 'transactional'>;
			let dryRun: boolean;
			let transactional: boolean;
			let source: string;
			let records: AsyncIterable<SourceRecord> | undefined;
			let draft = false;
			if (upload) {
				const parsed = settings.safeParse(request.query);
				if (!parsed.success)
					throw new InputError(
						`${String(parsed.error.issues[0].path[0])} ${parsed.error.issues[0].message} ` +
							'(give the settings in the query string of an upload)',
						String(parsed.error.issues[0].path[0]),
					);
				fields = parsed.data;
				dryRun = parsed.data.dry_run === 'true';
				transactional = parsed.data.transactional === 'true';
				source = `upload.${upload}`;
			} else {
				const parsed = createBody.safeParse(request.body);
				if (!parsed.success) {
					const issue = parsed.error.issues[0];
					throw new InputError(`${issue.path.join('.') || 'body'} ${issue.message}`, issue.path.join('.') || undefined);
				}
				if (parsed.data.draft) {
					// A draft's rows come here or in chunks; a source URL is read once, as the create's rows.
					if (parsed.data.recipients && parsed.data.source_url)
						throw new InputError('give either recipients (rows) or source_url, not both', 'recipients');
				} else if ((parsed.data.recipients === undefined) === (parsed.data.source_url === undefined))
					throw new InputError('give either recipients (rows) or source_url', 'recipients');
				else if (parsed.data.recipients?.length === 0)
					throw new InputError(
						'recipients must hold at least one row (or create a draft with draft: true and add rows in chunks)',
						'recipients',
					);
				fields = parsed.data;
				dryRun = parsed.data.dry_run === true;
				transactional = parsed.data.transactional === true;
				draft = parsed.data.draft === true;
				source = parsed.data.source_url ?? 'request.json';
				if (parsed.data.recipients) records = inlineRecords(parsed.data.recipients);
			}
			const input = {
				name: fields.name,
				// Absent: an A/B test's first variant's (core/campaigns.ts); else refused there, named.
				templateId: fields.template_id as string,
				from: fields.from,
				agentId: fields.agent_id,
				rate: fields.rate,
				at: fields.at,
				cron: fields.cron,
				tz: fields.tz,
				delimiter: fields.delimiter,
				testTo: fields.test_to,
				window: fields.window,
				endAt: fields.end_at,
				whenCapped: fields.when_capped,
				variants: fields.variants,
				testShare: fields.test_share,
				pickBy: fields.pick_by,
				decideAfter: fields.decide_after,
				ifTie: fields.if_tie,
				seed: fields.seed,
				minPerVariant: fields.min_per_variant === undefined ? undefined : Number(fields.min_per_variant),
				dryRun,
				transactional,
				source,
			};
			const create = async (rows: AsyncIterable<SourceRecord> | undefined) => {
				const answer = await campaigns.createCampaignOnce(context, {
					input,
					records: rows,
					names: API_NAMES,
					draft,
					key: idempotencyKey(request.headers['idempotency-key']),
				});
				// A dry run created nothing: 200, as does a replay.
				if (answer.replayed || answer.kind === 'dry_run') reply.code(200);
				return answer;
			};
			if (!upload) return create(records);
			return receiveUpload(request, reply, context.config, 'nothing was created', (body) =>
				create(parseRecords(body, upload, 'the upload', { delimiter: fields.delimiter })),
			);
		},
	);

	routes.add(
		{
			...at('addRecipients'),
			tag: 'campaigns',
			summary:
				`Add a chunk of at most ${RECIPIENTS_PER_CHUNK} rows to a draft (checked like create's rows, ` +
				'a phone refused twice across chunks); Idempotency-Key makes a retry return the first answer and add ' +
				'nothing; 409 unless a draft',
			params: id,
			body: addRecipientsBody,
			success: [200, '{ id, state, added: { total, accepted, rejected, rejections }, total, accepted, rejected }'],
		},
		async ({ params, body, request }) =>
			campaigns.addRecipientsOnce(
				context,
				params.id,
				body.recipients,
				body.first_line,
				idempotencyKey(request.headers['idempotency-key']),
			),
	);
	routes.add(
		{
			...at('startCampaign'),
			tag: 'campaigns',
			summary:
				'Start a draft (running, or scheduled with its start time); ' +
				'a campaign no longer a draft answers its status as it is',
			params: id,
			success: [200, 'the campaign, as GET shows it'],
		},
		async ({ params }) => campaigns.startCampaign(context, params.id),
	);

	routes.add(
		{
			...at('listCampaigns'),
			tag: 'campaigns',
			summary:
				'Campaigns, a page at a time (offset, limit), newest first or sort=state (life-cycle order); ' +
				'search= a part of the name or id (any case), state= one or more states (comma-separated), ' +
				'from= the sending number; total counts the campaigns that match',
			query: campaigns.campaignListQuery,
			success: [
				200,
				'{ items: [{ id, name, state, created_at, template_id, from, total, counts, ' +
					'… as GET /api/campaigns/:id }], total, limit, offset }',
			],
		},
		async ({ query }) => campaigns.pageCampaigns(context, query),
	);

	routes.add(
		{
			method: 'GET',
			url: '/api/campaigns/schedules',
			operationId: 'listCampaignSchedules',
			tag: 'campaigns',
			summary:
				'Campaign cron schedules, newest first: each with its next run, the campaigns it made ' +
				'(the newest 10 and their count) and its delivery funnel across them',
			success: [
				200,
				'{ schedules: [{ id, name, cron, tz, state: active|paused, next_run_at (null while paused), ' +
					'source and sending settings, created_at, paused_at, funnel, run_count, runs: the newest 10 }] }',
			],
			answer: z.object({ schedules: z.array(scheduleAnswer) }),
		},
		async () => ({ schedules: await campaigns.listSchedules(context) }),
	);
	for (const [action, operationId, act, summary] of [
		[
			'pause',
			'pauseCampaignSchedule',
			campaigns.pauseCampaignSchedule,
			'Pause a cron schedule: it fires nothing until resumed (a paused one is answered as it is)',
		],
		[
			'resume',
			'resumeCampaignSchedule',
			campaigns.resumeCampaignSchedule,
			'Resume a paused cron schedule from its next time (the times it missed are not made up)',
		],
	] as const) {
		routes.add(
			{
				method: 'POST',
				url: `/api/campaigns/schedules/:id/${action}`,
				operationId,
				tag: 'campaigns',
				summary,
				params: scheduleId,
				success: [200, 'the schedule, as GET /api/campaigns/schedules lists it'],
				answer: scheduleAnswer,
			},
			async ({ params }) => act(context, params.id),
		);
	}
	routes.add(
		{
			method: 'DELETE',
			url: '/api/campaigns/schedules/:id',
			operationId: 'removeCampaignSchedule',
			tag: 'campaigns',
			summary: 'Remove a cron schedule: it fires no more (the campaigns it made stay)',
			params: scheduleId,
			success: [200, '{ id, removed }'],
			answer: z.object({ id: z.string(), removed: z.literal(true) }),
		},
		async ({ params }) => campaigns.removeCampaignSchedule(context, params.id),
	);

	routes.add(
		{
			...at('getCampaign'),
			tag: 'campaigns',
			summary: 'State, counts per outcome, current rate, ETA, last error, settings',
			params: id,
			success: [200, 'the campaign'],
		},
		async ({ params }) => campaigns.campaignView(context, params.id),
	);

	for (const [route, act, summary] of [
		['pauseCampaign', campaigns.pauseCampaign, 'Stop new sends of the campaign on every process within a second'],
		['resumeCampaign', campaigns.resumeCampaign, 'Continue a paused campaign'],
	] as const) {
		routes.add(
			{ ...at(route), tag: 'campaigns', summary, params: id, success: [200, '{ id, state }'] },
			async ({ params }) => ({ id: params.id, state: await act(context, params.id) }),
		);
	}
	routes.add(
		{
			...at('cancelCampaign'),
			tag: 'campaigns',
			summary: 'Cancel: pending recipients become cancelled (a draft too; a schedule id stops the schedule)',
			params: id,
			success: [200, '{ id, state, cancelled }'],
		},
		async ({ params }) => campaigns.cancel(context, params.id),
	);
	routes.add(
		{
			...at('deleteCampaign'),
			tag: 'campaigns',
			summary:
				'Delete a finished campaign (completed, cancelled or failed): its recipients, ledger, report and ' +
				'delivery tracking leave Redis for good',
			params: id,
			success: [200, '{ id, deleted }'],
		},
		async ({ params }) => campaigns.deleteCampaign(context, params.id),
	);
	routes.add(
		{
			method: 'POST',
			url: '/api/campaigns/:id/reconcile',
			operationId: 'reconcileCampaign',
			tag: 'campaigns',
			summary: "Resolve unknown recipients from the service's own records",
			params: id,
			success: [200, '{ checked, sent, not_sent, still_unknown }'],
			answer: reconcileAnswer,
		},
		async ({ params }) => ({ id: params.id, ...(await campaigns.reconcileCampaign(context, params.id)) }),
	);
	routes.add(
		{
			method: 'POST',
			url: '/api/campaigns/:id/retry-not-sent',
			operationId: 'retryNotSent',
			tag: 'campaigns',
			summary: 'Send again the recipients proven not sent',
			params: id,
			success: [200, '{ id, state, requeued }'],
			answer: requeuedAnswer,
		},
		async ({ params }) => ({ id: params.id, ...(await campaigns.retryNotSent(context, params.id)) }),
	);
	routes.add(
		{
			method: 'POST',
			url: '/api/campaigns/:id/retry-undelivered',
			operationId: 'retryUndelivered',
			tag: 'campaigns',
			summary:
				'Send again, once, the recipients whose delivery the service proved failed; optional body { reason: ' +
				'a part of the reason, after: failed at least this long ago (30s, 15m, 2h, 1d) }',
			params: id,
			body: retryUndeliveredBody.optional(),
			success: [200, '{ id, state, requeued }'],
			answer: requeuedAnswer,
		},
		// The body as sent: the core reads it with the same rule, for the CLI's options too.
		async ({ params, request }) => ({
			id: params.id,
			...(await campaigns.retryUndelivered(context, params.id, (request.body ?? {}) as RetryUndeliveredBody, {
				reason: 'reason',
				after: 'after',
			})),
		}),
	);
	routes.add(
		{
			method: 'POST',
			url: '/api/campaigns/:id/choose',
			operationId: 'chooseVariant',
			tag: 'campaigns',
			summary:
				'An A/B test: send the remainder this variant, before the rule decides or after a tie that waits; ' +
				"the body's variant is its number (1, 2, …) or its template id",
			params: id,
			body: chooseVariantBody,
			success: [200, '{ id, variant, template_id }'],
			answer: chooseVariantAnswer,
		},
		async ({ params, body }) => campaigns.chooseCampaignVariant(context, params.id, body.variant),
	);
	// A sending number's frequency cap across its campaigns (audience/cap.ts).
	const number = z.object({ from: z.string() });
	const capText = '{ from, policy, source: number|default|none, number_policy, default_policy }';
	routes.add(
		{
			method: 'GET',
			url: '/api/numbers/:from/cap',
			operationId: 'getCap',
			tag: 'campaigns',
			summary: "The number's frequency cap: its own, else the default RUNNER_FREQUENCY_CAP, else none",
			params: number,
			success: [200, capText],
			answer: capAnswer,
		},
		async ({ params }) => audience.showCap(context, params.from, audience.CAP_API_NAMES),
	);
	routes.add(
		{
			method: 'PUT',
			url: '/api/numbers/:from/cap',
			operationId: 'setCap',
			tag: 'campaigns',
			summary:
				'Set the number\'s own frequency cap: { policy: "1/24h,3/7d" } (units s, m, h, d), ' +
				'or "none" for no cap whatever the default',
			params: number,
			body: z.object({ policy: z.string() }),
			success: [200, capText],
			answer: capAnswer,
		},
		async ({ params, body }) => audience.setCap(context, params.from, body.policy, audience.CAP_API_NAMES),
	);
	routes.add(
		{
			method: 'DELETE',
			url: '/api/numbers/:from/cap',
			operationId: 'clearCap',
			tag: 'campaigns',
			summary: "Remove the number's own frequency cap: the default holds again",
			params: number,
			success: [200, capText],
			answer: capAnswer,
		},
		async ({ params }) => audience.clearCap(context, params.from, audience.CAP_API_NAMES),
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/numbers/:from/daily',
			operationId: 'getDailyCounts',
			tag: 'campaigns',
			summary: "The number's sends and refusals per day (UTC), the last 8 days, newest first",
			params: number,
			success: [200, '{ from, days: [{ date, sent, failed }] }'],
			answer: dailyCountsAnswer,
		},
		async ({ params }) => audience.dailyCounts(context, params.from, audience.CAP_API_NAMES),
	);
	routes.add(
		{
			...at('setCampaignRate'),
			tag: 'campaigns',
			summary: "Change the campaign's sends per second",
			params: id,
			body: setCampaignRateBody,
			success: [200, '{ id, rate }'],
		},
		async ({ params, body }) => ({
			id: params.id,
			rate: await campaigns.setCampaignRate(context, params.id, body.rate),
		}),
	);

	routes.add(
		{
			...at('campaignReport'),
			tag: 'campaigns',
			summary:
				'One row per recipient in source order, streamed: line, phone, outcome, message_id, error, attempts, ' +
				'times; a page with offset/limit, only some outcomes with outcome=a,b (failed-delivery: ' +
				'sent and not delivered), one recipient with phone=… (404 when not in the campaign)',
			params: id,
			query: reportQuery,
			produces: ['application/json', 'text/csv'],
			success: [200, 'the report (a page of it, or the one row of phone): a JSON array or CSV'],
		},
		async ({ params, query, reply }) => {
			await getCampaign(context, params.id);
			// One recipient: found before the answer starts, so a phone not in the campaign is a 404, not an empty report.
			const found =
				query.phone === undefined ? undefined : [await campaigns.findRecipient(context, params.id, query.phone)];
			reply.type(query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
			reply.header('content-disposition', `attachment; filename="campaign-${params.id}-report.${query.format}"`);
			return Readable.from(
				campaigns.reportText(
					context,
					params.id,
					query.format,
					{
						offset: query.offset,
						limit: query.limit,
						outcomes: query.outcome?.filter((each) => each !== FAILED_DELIVERY) as Outcome[] | undefined,
						failedDelivery: query.outcome?.includes(FAILED_DELIVERY),
					},
					found,
				),
			);
		},
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/campaigns/:id/errors',
			operationId: 'campaignErrors',
			tag: 'campaigns',
			summary:
				'Recipients not sent, grouped by reason (reasons differing only in a number are one group; ' +
				'reason is its first, varies says the others differ)',
			params: id,
			success: [200, '[{ outcome, reason, count, varies }]'],
			answer: errorGroups,
		},
		async ({ params }) => {
			await getCampaign(context, params.id);
			return campaigns.errorBreakdown(context, params.id);
		},
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/campaigns/:id/rate-history',
			operationId: 'campaignRateHistory',
			tag: 'campaigns',
			summary: 'Sends per second over the last 10 minutes',
			params: id,
			success: [200, '[[epoch second, sends]]'],
			answer: rateHistoryAnswer,
		},
		async ({ params }) => {
			await getCampaign(context, params.id);
			return campaigns.rateHistory(context, params.id);
		},
	);
}
