/**
 * What a campaign is made of, checked before anything is stored: its settings (zod) and each
 * recipient row (the contract's B8 body rules, plus: no phone twice in one campaign).
 */
import { z } from 'zod/v4';

import { campaignName, parsePhoneNumber, runnerRate, sendTemplateBody, sendTemplateQuery } from 'convo-contract';

import { csvDelimiterNamed } from '../csv';
import { parseWindow, WindowSyntaxError, type WeekWindow } from '../audience/windows';
import { MAX_VARIANTS } from './variantSplit';
import { PICK_BY, type PickBy } from './variantChoice';

/** A phone number, digits with country code (a "+" and separators are accepted). */
const phoneDigits = z.string().transform((value, ctx) => {
	const parsed = parsePhoneNumber(value);
	if (!parsed.ok) {
		ctx.issues.push({ code: 'custom', input: value, message: parsed.reason });
		return z.NEVER;
	}
	return parsed.digits;
});

export const campaignSettings = z.object({
	/** Shown beside the id in lists; when absent, named after its source (campaigns/names.ts). */
	name: campaignName.optional(),
	templateId: sendTemplateQuery.shape.template_id,
	/** The business number that sends. */
	from: phoneDigits,
	agentId: sendTemplateQuery.shape.agent_id,
	/** Sends per second for this campaign's number. */
	rate: runnerRate('send').optional(),
	/** Recipient source: a file path or an http(s) URL. */
	source: z.string().min(1),
	format: z.enum(['csv', 'json', 'ndjson']).optional(),
	/** A CSV's delimiter (`,` `;` tab, or their names); when absent it is told from the header line (csv.ts). */
	delimiter: z
		.string()
		.transform((value, ctx) => {
			const delimiter = csvDelimiterNamed(value);
			if (delimiter === undefined) {
				ctx.issues.push({
					code: 'custom',
					input: value,
					message: 'must be comma, semicolon or tab (or , ; and a tab character)',
				});
				return z.NEVER;
			}
			return delimiter;
		})
		.optional(),
	/** Start once at this time (ISO 8601). */
	at: z.iso.datetime({ offset: true }).optional(),
	/** Repeat on this cron pattern in `tz`; each firing re-reads the source. */
	cron: z.string().min(9).optional(),
	tz: z.string().optional(),
	/**
	 * Send the first accepted row's message to this phone first; the
	 * campaign starts only if the service accepts it (testSend.ts).
	 */
	testTo: phoneDigits.optional(),
	/** Send only while this window is open in each recipient's local time (audience/windows.ts). */
	window: z
		.string()
		.transform((value, ctx) => {
			try {
				return parseWindow(value);
			} catch (error) {
				if (!(error instanceof WindowSyntaxError)) throw error;
				ctx.issues.push({ code: 'custom', input: value, message: error.message });
				return z.NEVER;
			}
		})
		.optional(),
	/** Recipients still unsent at this time (ISO 8601) are expired, and the campaign finishes. */
	endAt: z.iso.datetime({ offset: true }).optional(),
	/**
	 * A recipient over the frequency cap (audience/cap.ts): `skip` writes it capped (the default),
	 * `wait` keeps it pending until allowed.
	 */
	whenCapped: z.enum(['skip', 'wait'], { error: 'must be skip or wait' }).optional(),
	/** Check every row and answer the counts, storing and sending nothing (core/campaigns.ts createCampaign). */
	dryRun: z.boolean().optional(),
	/** Exempt from the marketing-only rules: sends to phones on the suppression list (audience/suppression.ts). */
	transactional: z.boolean().optional(),
	/**
	 * An A/B test (docs/guide/ab-tests.md): each variant as `<template id>[:var1,var2]`, the
	 * variables it declares (the service lists no template's variables: SPEC B8).
	 */
	variants: z
		.array(
			z.string().transform((value, ctx) => {
				const variant = parseVariant(value);
				if (typeof variant === 'string') {
					ctx.issues.push({ code: 'custom', input: value, message: variant });
					return z.NEVER;
				}
				return variant;
			}),
		)
		.min(2, { error: `must name 2 to ${MAX_VARIANTS} variants` })
		.max(MAX_VARIANTS, { error: `must name 2 to ${MAX_VARIANTS} variants` })
		.optional(),
	/** The test's share of the accepted audience: `20%` or `0.2`. */
	testShare: z.union([z.string(), z.number()]).optional(),
	pickBy: z.enum(PICK_BY, { error: 'must be delivered, read or replied' }).optional(),
	/** How long the test runs before the rule decides: a duration (`2h`, `30m`, `90s`). */
	decideAfter: z.string().optional(),
	ifTie: z.enum(['first', 'wait'], { error: 'must be first or wait' }).optional(),
	/** The split's seed (hex): a dry run prints it, so the real run can split alike. */
	seed: z
		.string()
		.regex(/^[0-9a-f]{8,64}$/, { error: 'must be 8 to 64 hex digits' })
		.optional(),
	/** The rule's minimum recipients per variant. */
	minPerVariant: z.int().min(1).max(1_000_000).optional(),
});
export type CampaignSettings = z.input<typeof campaignSettings>;

/**
 * How a client names the settings to its user: the CLI's flags, or the API's JSON fields (the API
 * has no format: an upload's type or a URL's name tells it).
 */
export type SettingNames = Record<
	| 'name'
	| 'templateId'
	| 'from'
	| 'agentId'
	| 'rate'
	| 'source'
	| 'at'
	| 'cron'
	| 'tz'
	| 'testTo'
	| 'window'
	| 'endAt'
	| 'whenCapped',
	string
> & { format?: string; delimiter?: string } & Partial<
		Record<'variants' | 'testShare' | 'pickBy' | 'decideAfter' | 'ifTie' | 'seed' | 'minPerVariant', string>
	>;

export const CLI_NAMES: SettingNames = {
	name: '--name',
	templateId: '--template',
	from: '--from',
	agentId: '--agent',
	rate: '--rate',
	source: '--recipients',
	format: '--format',
	delimiter: '--delimiter',
	at: '--at',
	cron: '--cron',
	tz: '--tz',
	testTo: '--test-to',
	window: '--window',
	endAt: '--end',
	whenCapped: '--when-capped',
	variants: '--variant',
	testShare: '--test-share',
	pickBy: '--pick-by',
	decideAfter: '--decide-after',
	ifTie: '--if-tie',
	seed: '--seed',
	minPerVariant: '--min-per-variant',
};
export const API_NAMES: SettingNames = {
	name: 'name',
	templateId: 'template_id',
	from: 'from',
	agentId: 'agent_id',
	rate: 'rate',
	source: 'source_url',
	delimiter: 'delimiter',
	at: 'at',
	cron: 'cron',
	tz: 'tz',
	testTo: 'test_to',
	window: 'window',
	endAt: 'end_at',
	whenCapped: 'when_capped',
	variants: 'variants',
	testShare: 'test_share',
	pickBy: 'pick_by',
	decideAfter: 'decide_after',
	ifTie: 'if_tie',
	seed: 'seed',
	minPerVariant: 'min_per_variant',
};

/** One variant of an A/B test: its template and the variables the template uses. */
export interface Variant {
	templateId: string;
	variables: string[];
}

/** `<template id>[:var1,var2]`, or why not. */
function parseVariant(text: string): Variant | string {
	const [templateId, declared, ...more] = text.trim().split(':');
	if (more.length > 0 || !/^[A-Za-z0-9_-]{1,100}$/.test(templateId ?? ''))
		return 'must be a template id, then optionally a colon and the variables it uses (tmpl_1:name,city)';
	const variables = declared === undefined || declared === '' ? [] : declared.split(',').map((name) => name.trim());
	if (variables.some((name) => !/^[A-Za-z0-9_]{1,64}$/.test(name)))
		return 'has a variable name that is not letters, digits or _ (1 to 64)';
	return { templateId, variables };
}

/**
 * An A/B test as a campaign keeps it (the hash's `ab_*` fields, campaigns/abTest.ts): the variants,
 * the split (seed, share), the rule (pick_by, minimum), when it decides, and what a tie does.
 */
export interface AbTestSettings {
	variants: Variant[];
	seed: string;
	share: number;
	pickBy: PickBy;
	decideAfterMs: number;
	ifTie: 'first' | 'wait';
	minimum: number;
}

/** What every campaign, and every campaign of a schedule, sends: one template from one number. */
export interface CampaignBasics {
	/**
	 * What lists show beside the id: given, or told from the source
	 * (names.ts). A schedule's campaigns carry the schedule's.
	 */
	name: string;
	templateId: string;
	from: string;
	agentId?: string;
	rate: number;
	source: string;
	format?: CampaignSettings['format'];
	/** A CSV's delimiter when the client gave one (a schedule's campaigns read with it too). */
	delimiter?: string;
	/** Sends only while open in each recipient's local time (audience/windows.ts); rows then may carry a `tz` column. */
	window?: WeekWindow;
	/** Epoch ms after which unsent recipients are expired. */
	endAt?: number;
	/**
	 * Sends to suppressed phones too (the operator says these
	 * messages are not marketing); a schedule's campaigns carry it.
	 */
	transactional?: boolean;
	/**
	 * What becomes of a recipient over the frequency cap (audience/cap.ts); absent: capped. A
	 * schedule's campaigns carry the schedule's.
	 */
	whenCapped?: 'skip' | 'wait';
	/** An A/B test of templates (abTest.ts); `templateId` is then its first variant's. */
	abTest?: AbTestSettings;
}

/** A recipient as the snapshot keeps it: what B8 needs for this person, nothing else. */
export interface Recipient {
	line: number;
	phone: string;
	variables?: Record<string, string | number>;
	buttons?: Array<{ index: number; sub_type: 'url'; text: string }>;
	/** An A/B test's draw (variantSplit.ts): 1 to 5 the variant it is sent in the test, 0 the winner's remainder. */
	variant?: number;
}

/** A recipient's B8 body: its variables, its phone, its buttons (the campaign's sends and its test send alike). */
export function templateBody(recipient: Recipient): Record<string, unknown> {
	return {
		...recipient.variables,
		phone: recipient.phone,
		...(recipient.buttons ? { buttons: recipient.buttons } : {}),
	};
}

export type RowVerdict =
	| { ok: true; recipient: Recipient }
	| { ok: false; line: number; phone: string; reason: string };

/** The unit of a size bound in a reason: characters of a string, items of an array. */
const unitOf = (origin: string) => (origin === 'string' ? ' characters' : origin === 'array' ? ' items' : '');

/**
 * A broken rule of a row, said without quoting the row: a reason names the rule and where it
 * broke. A variable's name is the file's column header (or a JSON key), bytes of the source
 * too, so a variable is named by its column (CSV) or its field's place in the object.
 */
function rowIssue(issue: z.core.$ZodIssue, fields: Record<string, unknown>, columns?: readonly string[]): string {
	const [key, ...rest] = issue.path;
	let where: string;
	if (key === 'phone' || key === undefined) where = 'phone';
	else if (key === 'buttons')
		where = `buttons${rest.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}`;
	else {
		const name = String(key);
		where = columns
			? `the variable in column ${columns.indexOf(name) + 1}`
			: `the variable in field ${Object.keys(fields).indexOf(name) + 1}`;
	}
	if (issue.code === 'unrecognized_keys')
		return `${where} has ${issue.keys.length} unknown field${issue.keys.length > 1 ? 's' : ''}`;
	// Messages written in the schemas are fixed sentences; zod's own may quote the input.
	if (issue.message && !/^(Invalid|Too |Unrecognized)/.test(issue.message)) return `${where} ${issue.message}`;
	switch (issue.code) {
		case 'invalid_type':
			return `${where} must be ${issue.expected === 'int' ? 'an integer' : `a ${issue.expected}`}`;
		case 'too_big':
			return `${where} must be at most ${String(issue.maximum)}${unitOf(issue.origin)}`;
		case 'too_small':
			return `${where} must be at least ${String(issue.minimum)}${unitOf(issue.origin)}`;
		case 'invalid_value':
			return `${where} must be one of: ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
		default:
			return `${where} breaks a rule of the send (SPEC B8)`;
	}
}

/**
 * The phone a row would be kept under (digits, as checkRow keys `seen`), or undefined when its
 * phone is missing or breaks a rule: what a repeat is looked up by before the rows are checked.
 */
export function rowPhone(fields: Record<string, unknown>): string | undefined {
	const rawPhone = fields.phone;
	if (typeof rawPhone !== 'string' && typeof rawPhone !== 'number') return undefined;
	const phone = parsePhoneNumber(String(rawPhone));
	return phone.ok ? phone.digits : undefined;
}

/**
 * One row: `phone` (normalized by the contract's phone rules), optional `buttons` (JSON, SPEC B8),
 * and every other field a template variable. Empty cells are left out (a variable the template
 * needs and the row lacks is the service's to refuse). `seen` maps phone -> first line. `columns`:
 * a CSV's header, so a reason names a cell by its column. A reason never quotes a cell.
 */
export function checkRow(
	line: number,
	fields: Record<string, unknown>,
	seen: Map<string, number>,
	columns?: readonly string[],
): RowVerdict {
	const rawPhone = fields.phone;
	const shownPhone = typeof rawPhone === 'string' || typeof rawPhone === 'number' ? String(rawPhone) : '';
	const reject = (reason: string): RowVerdict => ({ ok: false, line, phone: shownPhone, reason });
	if (rawPhone === undefined || rawPhone === null || shownPhone.trim() === '') return reject('phone is missing');
	const phone = parsePhoneNumber(shownPhone);
	if (!phone.ok) return reject(`phone ${phone.rule}`);

	let buttons: unknown = fields.buttons;
	if (typeof buttons === 'string') {
		if (buttons.trim() === '') buttons = undefined;
		else {
			try {
				buttons = JSON.parse(buttons);
			} catch {
				return reject('buttons is not JSON: write an array like [{"index":0,"sub_type":"url","text":"abc"}]');
			}
		}
	}
	const variables: Record<string, unknown> = {};
	for (const [name, value] of Object.entries(fields)) {
		if (name === 'phone' || name === 'buttons' || value === '' || value === null || value === undefined) continue;
		variables[name] = value;
	}
	const body = { ...variables, phone: phone.digits, ...(buttons === undefined ? {} : { buttons }) };
	const parsed = sendTemplateBody.safeParse(body);
	if (!parsed.success) return reject(parsed.error.issues.map((issue) => rowIssue(issue, fields, columns)).join('; '));

	// The row's phone is in the rejection beside the reason (the recipient's identity); the reason names the line.
	const first = seen.get(phone.digits);
	if (first !== undefined) return reject(`phone is already in this campaign (line ${first})`);
	seen.set(phone.digits, line);
	return {
		ok: true,
		recipient: {
			line,
			phone: phone.digits,
			...(Object.keys(variables).length > 0 ? { variables: variables as Record<string, string | number> } : {}),
			...(buttons === undefined ? {} : { buttons: parsed.data.buttons }),
		},
	};
}

/**
 * The snapshot's compact form of a row: [line, phone, variables?, buttons?, variant?] or, rejected,
 * [line, phone]. An A/B test's variant comes last, a bare number, so the claim's Lua reads it by
 * the row's end (includes/ledgerRecords.lua rowVariant).
 */
export function encodeRecipient(recipient: Recipient): string {
	const row: unknown[] = [recipient.line, recipient.phone];
	const variant = recipient.variant !== undefined;
	if (recipient.variables || recipient.buttons || variant) row.push(recipient.variables ?? 0);
	if (recipient.buttons || variant) row.push(recipient.buttons ?? 0);
	if (variant) row.push(recipient.variant);
	return JSON.stringify(row);
}

export function decodeRecipient(text: string): Recipient {
	const [line, phone, variables, buttons, variant] = JSON.parse(text) as [
		number,
		string,
		Recipient['variables'] | 0 | undefined,
		Recipient['buttons'] | 0,
		number | undefined,
	];
	return {
		line,
		phone,
		...(variables ? { variables } : {}),
		...(buttons ? { buttons } : {}),
		...(variant !== undefined ? { variant } : {}),
	};
}
