/** `campaign create|status|list|pause|resume|cancel|delete|rate|reconcile|retry|report`. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

import { Option, type Command } from 'commander';
import { CAMPAIGN_STATES } from 'convo-contract';

import * as core from '../core/campaigns';
import { UserError } from '../errors';
import { answer, plural, runs, spoken } from './command';
import { follow, warnIfNoRunner } from './follow';
import { addScheduleAndWait, formatOption, rateOption, type RunOptions } from './runOptions';

/** An ISO time as the CLI's tables show it: "2026-03-29 01:30" (UTC). */
const utcMinute = (iso: string) => iso.slice(0, 16).replace('T', ' ');

/** A campaign's status in one line: id, name, state and counts (`status`, and the end of a followed create). */
function describeCounts(status: core.CampaignStatus): string {
	const c = status.counts;
	const starts = status.state === 'scheduled' && status.start_at ? ` (starts ${utcMinute(status.start_at)} UTC)` : '';
	// A pause for a refusal of the service names it (the operator's and a failure streak's say so in last_error).
	const refused = core.isRefusal(status.paused_reason ?? undefined) ? ` (${status.paused_reason})` : '';
	const state = `${status.state}${starts}${refused}`;
	return (
		`${status.id} ${JSON.stringify(status.name)}: ${state} | sent ${c.sent}, failed ${c.failed}, ` +
		`unknown ${c.unknown}, not sent ${c.not_sent}, capped ${c.capped}, rejected ${c.rejected}, ` +
		`suppressed ${c.suppressed}, cancelled ${c.cancelled}, expired ${c.expired}, ` +
		`pending ${c.pending + c.claimed}${status.waiting ? ` | ${status.waiting.message}` : ''}` +
		`${status.last_error ? ` | ${status.last_error}` : ''}`
	);
}

/** An A/B test as `campaign status` prints it: its phase, then each variant's funnel beside the rule's figures. */
function describeAbTest(status: core.CampaignStatus): string[] {
	const test = status.ab_test;
	if (!test) return [];
	const pct = (rate: number) => `${(rate * 100).toFixed(1)}%`;
	const phase =
		test.phase === 'decided'
			? `decided: variant ${test.winner} (by ${test.chosen_by}); the remainder (${test.split.remainder}) gets it`
			: test.phase === 'waiting'
				? `tied: waiting for the operator's choice (campaign choose ${status.id} --variant <n>)`
				: `testing until ${test.decide_at} at the latest`;
	return [
		`A/B test by ${test.pick_by} rate: ${phase}`,
		...test.figures.variants.map(
			(variant) =>
				`  variant ${variant.variant} (${variant.template_id}): ${variant.recipients} in the test, ` +
				`sent ${variant.sent}, delivered ${variant.delivered}, read ${variant.read}, ` +
				`replied ${variant.replied}, failed ${variant.failed}; ` +
				`${test.pick_by} ${pct(variant.rate)}${variant.z === undefined ? '' : `, z ${variant.z.toFixed(2)}`}`,
		),
		`  rule: ${test.rule}; now ` +
			(test.figures.verdict === 'winner' ? `variant ${test.figures.leader} wins` : `a tie (${test.figures.why})`),
	];
}

/** The funnel as `campaign status` prints it under the counts: one line, then one per failure reason. */
function describeFunnel(status: core.CampaignStatus): string[] {
	const f = status.funnel;
	if (!f) return [];
	const pct = (rate: number) => `${(rate * 100).toFixed(1)}%`;
	const tracking =
		f.tracking === 'conversations_only'
			? ' (conversations only: delivered is not told from sent)'
			: f.tracking === 'off'
				? ' (tracking off)'
				: '';
	return [
		`funnel: audience ${f.audience}, accepted ${f.accepted}, sent ${f.sent}, ` +
			`delivered ${f.delivered} (${pct(f.rates.delivered)}), read ${f.read} (${pct(f.rates.read)}), ` +
			`replied ${f.replied} (${pct(f.rates.replied)}), failed delivery ${f.failed_delivery} ` +
			`(${pct(f.rates.failed_delivery)}), in flight ${f.in_flight}; ` +
			`${f.settled ? 'settled' : 'tracking'}${tracking}`,
		...f.failed_reasons.map((r) => `  failed ${r.count}: ${r.reason}`),
	];
}

/** The longest name `campaign list` prints in its table (--json has it whole). */
const NAME_SHOWN = 40;
const shortened = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * Recipients not sent, as the console counts them: refused by the service (failed) or proven
 * not sent (a campaign that ended failed leaves its recipients so).
 */
const notSent = (counts: core.CampaignDetail['counts']) => counts.failed + counts.not_sent;

/** The template as the console shows it: its name beside its id where the campaign keeps one. */
function templateShown(campaign: core.CampaignDetail): string {
	const name = campaign.template_name;
	return name ? `${shortened(name, NAME_SHOWN)} (${campaign.template_id})` : campaign.template_id;
}

/** `campaign list` as a table: a column per field an operator picks a campaign by, the counts last. */
function campaignTable(campaigns: core.CampaignDetail[]): string[] {
	const header = [
		'ID',
		'NAME',
		'STATE',
		'CREATED (UTC)',
		'START (UTC)',
		'TEMPLATE',
		'FROM',
		'TOTAL',
		'SENT',
		'NOT SENT',
		'UNKNOWN',
		'CANCELLED',
		'REJECTED',
		'PENDING',
	];
	const rows = campaigns.map((c) => [
		c.id,
		shortened(c.name, NAME_SHOWN),
		c.state,
		utcMinute(c.created_at),
		// Only a campaign created with a start time has one of its own; the others started at their create.
		c.start_at ? utcMinute(c.start_at) : '-',
		templateShown(c),
		c.from,
		String(c.total),
		String(c.counts.sent),
		String(notSent(c.counts)),
		String(c.counts.unknown),
		String(c.counts.cancelled),
		String(c.counts.rejected),
		String(c.counts.pending + c.counts.claimed),
	]);
	const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
	return [header, ...rows].map((row) =>
		row
			.map((cell, column) => cell.padEnd(widths[column]))
			.join('  ')
			.trimEnd(),
	);
}

const CAMPAIGN_FORMATS = ['csv', 'json', 'ndjson'] as const;

/** `campaign list`'s options as its errors name them. */
const LIST_OPTION_NAMES = {
	search: '--search',
	state: '--state',
	from: '--from',
	sort: '--sort',
	limit: '--limit',
	offset: '--offset',
} as const;
/** Campaigns read per round when `campaign list` lists every match. */
const ALL_PAGE = 500;

const STATUS_HELP = [
	'state and counts per outcome, then the delivery funnel: audience, accepted, sent, delivered, read, ' +
		'replied and failed delivery',
	'(each with its share of sent), in flight, and whether tracking has settled; ' +
		'then each delivery failure reason with its count.',
	'--json adds the current rate and the ETA',
].join(' ');

const REPORT_HELP = [
	`one row per recipient, in the recipients file's order, with the columns ${core.REPORT_COLUMNS.join(', ')}.`,
	'outcome is what the send came to; delivery (sent, delivered, read or failed, empty until known or when not sent),',
	'delivered_at, read_at, delivery_error and replied_at are what came of the message once sent: ' +
		'its delivery and the reply',
].join(' ');

/**
 * Exit codes of a followed campaign that did not complete (1 stays "the command failed"): a
 * script's `create --wait && next` must not read these as success.
 * docs/decisions/operations/cli-exit-codes.md.
 */
const NOT_COMPLETED_EXIT: Readonly<Record<string, number>> = { failed: 2, cancelled: 3, paused: 4 };

/** Says on stderr why a followed campaign did not complete, and sets the exit code for it. */
function exitForEnd(status: core.CampaignStatus): void {
	const code = NOT_COMPLETED_EXIT[status.state];
	if (code === undefined) return;
	const why = status.last_error
		? `: ${status.last_error}`
		: status.state === 'cancelled'
			? ' (campaign cancel or the console)'
			: '';
	const sent = `${status.counts.sent} sent`;
	const resume = status.state === 'paused' ? `; resume it with: convo-runner campaign resume ${status.id}` : '';
	process.stderr.write(`convo-runner: campaign ${status.id} ended ${status.state}${why}; ${sent}${resume}\n`);
	process.exitCode = code;
}

const FAILED_DELIVERY = 'failed-delivery';

/** `--outcome a,b` as outcomes (and failed-delivery); an unknown one is refused, naming those there are. */
function outcomesOf(text: string): { outcomes: core.Outcome[]; failedDelivery: boolean } {
	const outcomes = text
		.split(',')
		.map((part) => part.trim())
		.filter(Boolean);
	const known = [...core.OUTCOMES, FAILED_DELIVERY] as readonly string[];
	const unknown = outcomes.filter((outcome) => !known.includes(outcome));
	if (unknown.length > 0 || outcomes.length === 0)
		throw new UserError(`--outcome takes outcomes among ${known.join(', ')}, comma-separated; got "${text}"`);
	return {
		outcomes: outcomes.filter((outcome) => outcome !== FAILED_DELIVERY) as core.Outcome[],
		failedDelivery: outcomes.includes(FAILED_DELIVERY),
	};
}

/** The create's count of suppressed rows, said only when there are some (most campaigns have none). */
const suppressedPart = (suppressed: number) =>
	suppressed > 0 ? `, ${suppressed} suppressed (on the suppression list)` : '';

/** How many rejected rows create prints; the report has them all. */
const REJECTIONS_PRINTED = 10;

/** The rejected rows create prints (line, phone, reason), and how to see the rest. */
function describeRejections(created: core.CreateAnswer & { kind: 'campaign' }): string[] {
	const shown = created.rejections
		.slice(0, REJECTIONS_PRINTED)
		.map((r) => `  line ${r.line}${r.phone ? ` (${r.phone})` : ''}: ${r.reason}`);
	const more = created.rejected - shown.length;
	return more > 0
		? [...shown, `  and ${more} more; see: convo-runner campaign report ${created.id} --outcome rejected`]
		: shown;
}

/** The daily messaging limit's part of a dry run's estimate (audience/budget.ts). */
function describeDailyLimit(days: number, limit: core.DailyLimitEstimate): string {
	const holding = limit.holding > 0 ? ` (${limit.holding} more are counted already and draw nothing)` : '';
	const spread =
		days === 1
			? 'all of them today'
			: `${limit.first_day} today, then up to ${limit.limit} a day, ${limit.last_day} on the last`;
	const drawing = `${plural(limit.drawing, 'recipient')} counted anew${holding}`;
	return `daily limit ${limit.limit} (${limit.left} left now): ${drawing}; ${spread}: ${plural(days, 'day')}`;
}

/** A dry run's answer as text: counts, reasons, the first rejected rows and the estimate. */
function describeDryRun(dry: core.DryRunAnswer): string {
	const { estimate } = dry;
	const reasons = dry.reasons.map(
		(group) =>
			`  ${group.count} ${group.outcome}: ` +
			`${group.reason}${group.varies ? ' (and others that differ only in a number)' : ''}`,
	);
	const shown = dry.rejections
		.slice(0, REJECTIONS_PRINTED)
		.map((r) => `  line ${r.line}${r.phone ? ` (${r.phone})` : ''}: ${r.reason}`);
	const more = dry.rejected - shown.length;
	const when = estimate.cron
		? `from the next firing at ${estimate.starts_at} (${estimate.cron}, ${estimate.tz})`
		: `from ${estimate.starts_at}, until about ${estimate.ends_at}`;
	const capped = dry.counts.capped > 0 ? `; ${dry.counts.capped} of the accepted over the frequency cap now` : '';
	const expired = dry.counts.expired ? ` (of the accepted, ${dry.counts.expired} would expire unsent at the end)` : '';
	return [
		`dry run: nothing was stored or sent`,
		`${plural(dry.total, 'row')}: ${dry.counts.accepted} accepted, ${dry.counts.rejected} rejected` +
			`${suppressedPart(dry.counts.suppressed)}${capped}${expired}`,
		...(dry.zones ? [`time zones: ${dry.zones.map((zone) => `${zone.zone} ${zone.recipients}`).join(', ')}`] : []),
		...(reasons.length > 0 ? ['reasons:', ...reasons] : []),
		...(shown.length > 0
			? [
					'first rejected rows:',
					...shown,
					...(more > 0 ? [`  and ${more} more (the reasons above count them all)`] : []),
				]
			: []),
		...(dry.ab_test
			? [
					`A/B test split (seed ${dry.ab_test.seed}, --seed splits the real run alike): ` +
						dry.ab_test.split.test
							.map((variant) => `variant ${variant.variant} (${variant.template_id}) ${variant.recipients}`)
							.join(', ') +
						`, remainder ${dry.ab_test.split.remainder} (gets the winner)`,
				]
			: []),
		`estimated duration: ${spoken(estimate.seconds)} at ${plural(estimate.rate, 'send')}/s, ${when}` +
			(dry.ab_test ? ` (with the A/B test's wait of up to ${spoken(dry.ab_test.decide_after_seconds)})` : ''),
		...(estimate.daily_limit ? [describeDailyLimit(estimate.days, estimate.daily_limit)] : []),
		...(dry.test_send
			? [
					`test send to ${dry.test_send.to}: not sent (a dry run sends no test)` +
						(dry.test_send.held ? `; the create would refuse it: ${dry.test_send.held}` : ''),
				]
			: []),
	].join('\n');
}

interface CreateOptions extends RunOptions {
	name?: string;
	template: string;
	from: string;
	agent?: string;
	recipients: string;
	format?: (typeof CAMPAIGN_FORMATS)[number];
	delimiter?: string;
	at?: string;
	testTo?: string;
	window?: string;
	end?: string;
	whenCapped?: string;
	dryRun?: boolean;
	transactional?: boolean;
	variant?: string[];
	testShare?: string;
	pickBy?: string;
	decideAfter?: string;
	ifTie?: string;
	seed?: string;
	minPerVariant?: string;
}

/** The options of `campaign create` as the campaign's settings (core/campaigns.ts). */
function createSettings(options: CreateOptions): core.CampaignSettings {
	return {
		name: options.name,
		templateId: options.template,
		from: options.from,
		agentId: options.agent,
		source: options.recipients,
		format: options.format,
		delimiter: options.delimiter,
		rate: options.rate,
		at: options.at,
		cron: options.cron,
		tz: options.tz,
		testTo: options.testTo,
		window: options.window,
		endAt: options.end,
		whenCapped: options.whenCapped as 'skip' | 'wait' | undefined,
		dryRun: options.dryRun,
		transactional: options.transactional,
		variants: options.variant,
		testShare: options.testShare,
		pickBy: options.pickBy as 'read' | 'replied' | 'delivered' | undefined,
		decideAfter: options.decideAfter,
		ifTie: options.ifTie as 'first' | 'wait' | undefined,
		seed: options.seed,
		minPerVariant: options.minPerVariant === undefined ? undefined : Number(options.minPerVariant),
	};
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function addCampaignCommands(program: Command): void {
	const campaign = program.command('campaign').description('create, follow, control and report template campaigns');

	const create = campaign
		.command('create')
		.description('store a campaign and print its id; the runner processes send it')
		.option(
			'--name <name>',
			'shown beside the id in lists, 1 to 120 characters (default: the recipients file name without extension)',
		)
		.option('--template <id>', 'template id (UUID); with --variant, the first variant')
		.requiredOption('--from <number>', 'sending business number, with country code')
		.option('--agent <id>', 'agent to assign to each conversation (UUID)')
		.requiredOption(
			'--recipients <file-or-url>',
			'CSV, JSON array or NDJSON with a phone column; other columns are template variables',
		)
		.addOption(formatOption('recipients', CAMPAIGN_FORMATS))
		.option(
			'--delimiter <delimiter>',
			"a CSV's delimiter: comma, semicolon or tab (default: told from the header line)",
		)
		.addOption(rateOption('sends per second for this number'))
		.option('--at <iso>', 'start once at this time (ISO 8601 with offset)')
		.option(
			'--window <hours>',
			'send only within these hours in each recipient\'s local time: 09:00-20:00, or "mon-fri 09:00-20:00, ' +
				"sat 10:00-14:00\"; a tz column (IANA name) sets a row's zone, else its phone's country",
		)
		.option(
			'--end <iso>',
			'recipients still unsent at this time (ISO 8601 with offset) are expired, and the campaign finishes',
		)
		.option(
			'--test-to <phone>',
			"first send the first recipient's message to this phone; " +
				'create only if the service accepts it (needs CONVO_EXTERNAL_URL and CONVO_API_KEY)',
		)
		.option(
			'--when-capped <skip|wait>',
			'a recipient over the frequency cap (convo-runner cap): skip marks it capped (default), ' +
				'wait sends it once the cap allows',
		)
		.option(
			'--dry-run',
			'check every row as the create would and print the counts, reasons, ' +
				'first rejected rows and estimated duration; stores and sends nothing (no test send)',
		)
		.option(
			'--transactional',
			'not marketing (order updates, one-time codes): sends to phones on the suppression list too',
		)
		.option(
			'--variant <template[:vars]>',
			'an A/B test: a variant, its template id and the variables it uses (tmpl:name,city); repeat for 2 to 5',
			collect,
		)
		.option('--test-share <share>', 'an A/B test: the share of the audience the variants split (20% or 0.2)')
		.option('--pick-by <read|replied|delivered>', 'an A/B test: the rate the winner is chosen by (default read)')
		.option('--decide-after <duration>', 'an A/B test: when the rule decides at the latest (2h, 30m, 90s)')
		.option(
			'--if-tie <first|wait>',
			'an A/B test: no winner beyond chance sends the first variant (default) or waits for `campaign choose`',
		)
		.option('--seed <hex>', "an A/B test: the split's seed (a dry run prints it: the same seed splits alike)")
		.option('--min-per-variant <n>', "an A/B test: the rule's minimum recipients per variant (default 50)");
	runs<CreateOptions>(
		addScheduleAndWait(create, { rereads: 'recipients', follows: 'campaign' }),
		async ({ context, io, options }) => {
			const created = await core.createCampaign(context, createSettings(options));
			// A dry run has nothing to follow: --wait is left alone.
			if (created.kind === 'dry_run') return answer(created, () => describeDryRun(created));
			const tested = created.test_send
				? `test send to ${created.test_send.to} accepted (message ${created.test_send.message_id ?? 'id not given'})\n`
				: '';
			if (created.kind === 'schedule') {
				await warnIfNoRunner(context, `no runner will fire schedule ${created.schedule.id} yet`);
				return answer(
					created,
					() =>
						`${tested}schedule ${created.schedule.id} ${JSON.stringify(created.schedule.name)}: ` +
						`${created.schedule.cron} (${created.schedule.tz}); ` +
						'each firing is a campaign of its own (campaign list)',
				);
			}
			const shouldFollow = options.wait || (!io.json && process.stderr.isTTY && created.state === 'running');
			if (!shouldFollow) {
				// A followed create says it while it follows (follow.ts).
				await warnIfNoRunner(context, `no runner is taking campaign ${created.id} yet`);
				return answer(
					created,
					() =>
						tested +
						[
							`campaign ${created.id}: ${created.state}, ${plural(created.accepted, 'recipient')}, ` +
								`${created.rejected} rejected${suppressedPart(created.suppressed)}`,
							...describeRejections(created),
						].join('\n'),
				);
			}
			const heading =
				tested +
				[
					`campaign ${created.id}: ${plural(created.accepted, 'recipient')}, ` +
						`${created.rejected} rejected${suppressedPart(created.suppressed)}`,
					...describeRejections(created),
				].join('\n') +
				'\n';
			const final = await follow(context, created.id, { heading });
			exitForEnd(final);
			// The create's own state was the campaign's at its start: the document says how it ended.
			return answer({ ...created, state: final.state, status: final }, () => describeCounts(final));
		},
		{
			withService: (options) => options.testTo !== undefined && !options.dryRun,
			check: (options, config) => core.checkCampaignSettings(config, createSettings(options)),
		},
	);

	runs(
		campaign
			.command('choose <id>')
			.description('an A/B test: send the remainder this variant, before the rule decides or after a tie that waits')
			.requiredOption('--variant <n|template>', "the variant's number (1, 2, ...) or its template id"),
		async ({ context, args: [id], options }) => {
			const chosen = await core.chooseCampaignVariant(context, id, (options as { variant: string }).variant);
			return answer(
				chosen,
				() => `campaign ${id}: variant ${chosen.variant} (${chosen.template_id}) chosen; the remainder gets it`,
			);
		},
	);

	runs(
		campaign.command('status <id>').description(STATUS_HELP).option('--wait', 'follow until it settles'),
		async ({ context, args: [id], options }) => {
			const status = options.wait ? await follow(context, id) : await core.campaignStatus(context, id);
			if (options.wait) exitForEnd(status);
			return answer(status, () =>
				[describeCounts(status), ...describeFunnel(status), ...describeAbTest(status)].join('\n'),
			);
		},
	);

	runs(
		campaign
			.command('list')
			.description(
				'campaigns, newest first, and cron schedules; --search, --state, --from narrow the list, ' +
					'--limit and --offset page it (without --limit every match is listed)',
			)
			.option('--search <text>', 'only campaigns whose name or id holds this text (any case)')
			.option('--state <states>', `only campaigns in these states, separated by commas (${CAMPAIGN_STATES.join(', ')})`)
			.option('--from <number>', 'only campaigns sending from this number')
			.addOption(
				new Option('--sort <order>', 'created: newest first; state: by state, newest first within one')
					.choices(core.CAMPAIGN_SORTS)
					.default('created'),
			)
			.option('--limit <n>', 'the most campaigns to list (a page)')
			.option('--offset <n>', 'campaigns to skip first (the next page starts at offset + limit)'),
		async ({ context, options }) => {
			const { search, state, from, sort, limit, offset } = options as Record<string, string | undefined>;
			const query = core.checkedListQuery({ search, state, from, sort, limit, offset }, LIST_OPTION_NAMES);
			const filtered = search !== undefined || state !== undefined || from !== undefined;
			let page = await core.pageCampaigns(context, limit === undefined ? { ...query, limit: ALL_PAGE } : query);
			const campaigns = [...page.items];
			// Without --limit every match is listed, read a bounded page at a time.
			while (limit === undefined && page.items.length > 0 && query.offset + campaigns.length < page.total) {
				page = await core.pageCampaigns(context, {
					...query,
					offset: query.offset + campaigns.length,
					limit: ALL_PAGE,
				});
				campaigns.push(...page.items);
			}
			const schedules = filtered ? [] : await core.listSchedules(context);
			await warnIfNoRunner(context, 'nothing listed here is being sent');
			const shown = { total: page.total, offset: query.offset, count: campaigns.length };
			const next = query.offset + campaigns.length;
			return answer({ campaigns, schedules, ...shown }, () =>
				[
					...schedules.map(
						(s) =>
							`schedule ${s.id} ${JSON.stringify(s.name ?? '')}: ${s.cron} (${s.tz}) from ${s.source}; ` +
							(s.state === 'paused'
								? 'paused; '
								: s.next_run_at === null
									? 'no next run; '
									: `next run ${utcMinute(s.next_run_at)} UTC; `) +
							`${plural(s.run_count, 'run')}; ` +
							`across its campaigns: sent ${s.funnel.sent}, delivered ${s.funnel.delivered}, ` +
							`read ${s.funnel.read}, replied ${s.funnel.replied}, failed delivery ${s.funnel.failed_delivery}`,
					),
					...(campaigns.length > 0
						? campaignTable(campaigns)
						: [filtered || query.offset > 0 ? 'no campaign matches' : 'no campaigns']),
					...(campaigns.length > 0 && (next < page.total || query.offset > 0)
						? [
								`campaigns ${query.offset + 1}-${next} of ${page.total}` +
									(next < page.total ? ` (next page: --offset ${next})` : ''),
							]
						: []),
				].join('\n'),
			);
		},
	);

	for (const [name, description] of [
		[
			'pause',
			'stop new sends of this campaign on every process within a second; ' +
				'with a cron schedule id, the schedule fires nothing until resumed',
		],
		['resume', 'continue a paused campaign, or a paused cron schedule from its next time'],
	] as const) {
		runs(campaign.command(`${name} <id>`).description(description), async ({ context, args: [id] }) => {
			const result = await core.pauseOrResume(context, id, name);
			return answer(result, () =>
				result.schedule
					? `schedule ${id}: ${result.state}` +
						(result.next_run_at === null ? '' : `, next run ${utcMinute(result.next_run_at)} UTC`)
					: `${id}: ${result.state}`,
			);
		});
	}

	runs(
		campaign
			.command('cancel <id>')
			.description('cancel a campaign (pending recipients become cancelled), or stop a cron schedule'),
		async ({ context, args: [id] }) => {
			const result = await core.cancel(context, id);
			return answer(result, () => `${id}: cancelled`);
		},
	);

	runs(
		campaign
			.command('delete <id>')
			.description(
				'delete a finished campaign (completed, cancelled or failed): its recipients, ledger, report and ' +
					'delivery tracking leave Redis for good (export the report first)',
			),
		async ({ context, args: [id] }) => {
			const result = await core.deleteCampaign(context, id);
			return answer(result, () => `${id}: deleted`);
		},
	);

	runs(
		campaign.command('rate <id> <per-second>').description("change the campaign's sends per second while it runs"),
		async ({ context, args: [id, perSecond] }) => {
			const rate = await core.setCampaignRate(context, id, Number(perSecond));
			return answer({ id, rate }, () => `${id}: ${plural(rate, 'send')}/s`);
		},
	);

	runs(
		campaign
			.command('reconcile <id>')
			.description("resolve unknown recipients from the service's own records (sent or not_sent)"),
		async ({ context, args: [id] }) => {
			const result = await core.reconcileCampaign(context, id);
			return answer(
				{ id, ...result },
				() =>
					`${id}: checked ${result.checked}; sent ${result.sent}, not sent ${result.not_sent}, ` +
					`still unknown ${result.still_unknown}`,
			);
		},
		{ withService: true },
	);

	runs(
		campaign
			.command('retry <id>')
			.description(
				'send again the recipients proven not sent (--not-sent), ' +
					'or those whose delivery the service proved failed (--undelivered, once each)',
			)
			.option('--not-sent', 'retry the not_sent recipients')
			.option(
				'--undelivered',
				"retry the recipients whose message the service's record shows failed (never delivered, " +
					'read or still moving); each once',
			)
			.option('--reason <text>', 'with --undelivered: only failures whose reason holds this text (any case)')
			.option('--after <duration>', 'with --undelivered: only failures at least this old (30s, 15m, 2h, 1d)'),
		async ({ context, args: [id], options }) => {
			const { notSent, undelivered, reason, after } = options as {
				notSent?: boolean;
				undelivered?: boolean;
				reason?: string;
				after?: string;
			};
			if (Boolean(notSent) === Boolean(undelivered))
				throw new UserError('campaign retry needs one of --not-sent or --undelivered');
			if (!undelivered && (reason !== undefined || after !== undefined))
				throw new UserError('--reason and --after go with --undelivered');
			const result = undelivered
				? await core.retryUndelivered(context, id, { reason, after }, { reason: '--reason', after: '--after' })
				: await core.retryNotSent(context, id);
			return answer(
				{ id, ...result },
				() => `${id}: ${plural(result.requeued, 'recipient')} sent again; ${result.state}`,
			);
		},
	);

	runs(
		campaign
			.command('report <id>')
			.description(REPORT_HELP)
			.addOption(new Option('--format <format>', 'json (default with --json) or csv').choices(['json', 'csv']))
			.option(
				'--outcome <outcomes>',
				`only rows with these outcomes, comma-separated (${core.OUTCOMES.join(', ')}, or failed-delivery: ` +
					'sent and its delivery failed)',
			)
			.option(
				'--phone <phone>',
				"only this recipient's row, the phone written as in the recipients file (exit 1 when it is not one)",
			)
			.option('--output <file>', 'write the report to a file instead of stdout'),
		async ({ context, io, args: [id], options }) => {
			const format: 'json' | 'csv' = options.format ?? (io.json ? 'json' : 'csv');
			const filter = options.outcome === undefined ? undefined : outcomesOf(String(options.outcome));
			// Looked up before the output opens, so a phone that is no recipient leaves no empty file behind.
			const found =
				options.phone === undefined
					? undefined
					: [await core.findRecipient(context, id, String(options.phone), '--phone')];
			const out = options.output ? createWriteStream(options.output) : process.stdout;
			for await (const chunk of core.reportText(
				context,
				id,
				format,
				{ outcomes: filter?.outcomes, failedDelivery: filter?.failedDelivery },
				found,
			)) {
				if (!out.write(chunk)) await once(out, 'drain');
			}
			if (options.output) {
				out.end();
				await once(out, 'finish');
			}
		},
	);
}
