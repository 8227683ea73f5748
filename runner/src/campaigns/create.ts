/**
 * Creating a campaign: the settings are checked, the recipient source is read as a stream, each row
 * is checked (a bad row is kept as `rejected` with its line and reason, never sent), and the
 * audience is snapshotted into Redis. Nothing becomes visible until the whole source was read: a
 * source that cannot be read to its end creates nothing. A draft (draft.ts) is snapshotted the
 * same way, then grows by chunks checked by the same RowChecker.
 */
import { randomBytes } from 'node:crypto';

import { csvDelimiterFor, formatOf, readRecords, SourceError, type SourceRecord } from '../source';
import { shownUrl } from '../net/urls';
import { delimiterName } from '../csv';
import { PENDING_RECORD, counterField, encodeRecord, OUTCOMES } from '../ledger';
import type { RunnerContext } from '../context';
import { ConflictError, UserError } from '../errors';
import { cappedRows } from '../limits';
import { IDEMPOTENCY_SECONDS } from '../keys';
import { redisScript } from '../redisScripts';
import { forgetCampaign, listCampaign, registerCampaign } from '../keyGroups';
import {
	checkRow,
	encodeRecipient,
	rowPhone,
	type AbTestSettings,
	type CampaignBasics,
	type Recipient,
} from './schema';
import { variantOf } from './variantSplit';
import { abTestFields } from './abTest';
import { encodeWindow, ZoneFinder, type ZoneKey, type ZoneTable, type ZoneVerdict } from '../audience/windows';
import type { CampaignState } from './store';
import { ReasonTally, type ErrorGroup } from './report';
import { openCopy, reserveCopy, suppressedNotes } from '../audience/suppression';
import { phonesCounted, showBudget, UNLIMITED } from '../audience/budget';
import { wouldCap } from '../audience/cap';

const WRITE_BATCH = 1000;

/**
 * Batches between full garbage collections, when the process allows them (the bin's
 * `--expose-gc`). The create keeps nothing per recipient, but each batch's rows live across its
 * Redis round trips, so V8 moves them to the old space and lets that grow until it decides to
 * collect: a 1,000,000-row create peaked anywhere from 96 to 210 MB run to run. A
 * full collection every 100,000 rows (tens of ms each) makes the peak independent of that.
 */
const COLLECT_EVERY_BATCHES = 100;
const collectGarbage = (globalThis as { gc?: () => void }).gc;
/** Names for a refusal that cannot come here: core told the format at create, naming the client's settings. */
const FORMAT_TOLD = { source: 'source', format: 'format' };
/** How many rejected rows the create answer lists (the report has them all). */
const REJECTIONS_SHOWN = 20;

/**
 * What a CSV's header was read as, for a source without a phone column: a header `phone;name`
 * read with commas is one column named `phone;name`, which says at once what went wrong. The
 * header is the operator's own file; each name is cut short and at most 10 are listed.
 */
function columnsRead(columns: readonly string[] | undefined, given: string | undefined, byName = false): string {
	if (!columns) return '';
	const shown = columns.slice(0, 10).map((name) => JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name));
	const more = columns.length > shown.length ? ` and ${columns.length - shown.length} more` : '';
	const how =
		given === undefined
			? 'the delimiter told from its header line (comma, semicolon or tab; --delimiter, ' +
				"or the API's delimiter, sets it)"
			: byName
				? "the tab delimiter of a .tsv or .txt name (--delimiter, or the API's delimiter, sets another)"
				: `the ${delimiterName(given)} delimiter given`;
	return (
		`. The header was read as ${columns.length} column${columns.length === 1 ? '' : 's'}, with ${how}: ` +
		`${shown.join(', ')}${more}`
	);
}

export interface Snapshot {
	id: string;
	name: string;
	state: CampaignState;
	total: number;
	accepted: number;
	rejected: number;
	/** Rows whose phone is on the suppression list: kept as `suppressed`, never sent (not counted as accepted). */
	suppressed: number;
	rejections: Array<{ line: number; phone: string; reason: string }>;
}

/** Field/value pairs of the hashes a batch of rows writes. */
export interface StagedRows {
	recipients: string[];
	ledger: string[];
	/** phone -> "line:index" of each accepted row: where a repeat is found, and a reply its recipient (keys.phones). */
	phones: string[];
	/** A windowed campaign's "<zone>.<chunk>" -> indexes fields (keys.zoneIndexes), as each chunk fills. */
	zones: string[];
}

const nothingStaged = (): StagedRows => ({ recipients: [], ledger: [], phones: [], zones: [] });

/** Indexes per field of a zone's list (keys.zoneIndexes): about 7 KB each, read whole by the feeder. */
const ZONE_CHUNK = 1000;

/**
 * Sorts a windowed campaign's accepted recipients into per-zone lists as they are checked,
 * holding at most one unfinished chunk per zone (a few hundred zones at most).
 */
class ZoneLists {
	readonly table: ZoneTable;
	private readonly numbers = new Map<ZoneKey, number>();
	private readonly open = new Map<number, string[]>();

	/** `table`: a draft's zones so far (its later chunks add to them). */
	constructor(
		readonly finder: ZoneFinder,
		table: ZoneTable = [],
	) {
		this.table = table.map(([key, count, chunks]) => [key, count, chunks]);
		this.table.forEach(([key], zone) => this.numbers.set(key, zone));
	}

	add(key: ZoneKey, index: string, staged: StagedRows): void {
		let zone = this.numbers.get(key);
		if (zone === undefined) {
			zone = this.table.length;
			this.numbers.set(key, zone);
			this.table.push([key, 0, 0]);
		}
		const chunk = this.open.get(zone) ?? [];
		chunk.push(index);
		this.open.set(zone, chunk);
		this.table[zone][1]++;
		if (chunk.length >= ZONE_CHUNK) this.close(zone, staged);
	}

	/** Stages every unfinished chunk: the end of the rows. */
	closeAll(staged: StagedRows): void {
		for (const zone of [...this.open.keys()]) this.close(zone, staged);
	}

	private close(zone: number, staged: StagedRows): void {
		const chunk = this.open.get(zone);
		if (!chunk || chunk.length === 0) return;
		staged.zones.push(`${zone}.${this.table[zone][2]++}`, chunk.join(','));
		this.open.delete(zone);
	}
}

/** The phones a batch of rows would be kept under, once each: what is looked up in a phone index. */
export function phonesOf(records: readonly SourceRecord[]): string[] {
	const phones = new Set<string>();
	for (const record of records) {
		const phone = record.ok ? rowPhone(record.fields) : undefined;
		if (phone !== undefined) phones.add(phone);
	}
	return [...phones];
}

/** `seen` for a batch of rows: each of `phones` a phone index holds (HMGET's answer `lines`), with its first line. */
export function phonesSeen(phones: readonly string[], lines: ReadonlyArray<string | null>): Map<string, number> {
	const seen = new Map<string, number>();
	phones.forEach((phone, i) => {
		const line = lines[i];
		// "line:index" (or "line" in a draft created before replies were attributed): the line leads.
		if (line !== null && line !== undefined) seen.set(phone, Number.parseInt(line, 10));
	});
	return seen;
}

/**
 * Checks rows one by one (schema.ts's checkRow: phone, buttons, variables, a phone twice) and
 * stages what each writes, at consecutive indexes from `firstIndex`. `seen` (phone -> first line)
 * holds the phones of the batch at hand that the campaign has already, read from a phone index in
 * Redis (the staged one of a create, a draft's own); a row accepted adds its phone to it, so a
 * repeat within the batch is found too. Nothing grows with the audience but the counts.
 */
export class RowChecker {
	total = 0;
	accepted = 0;
	rejected = 0;
	suppressed = 0;
	lastLine = 0;
	anyPhoneField = false;
	/** The first CSV header read: a source without a phone column is told what was read instead. */
	columns?: readonly string[];
	readonly rejections: Snapshot['rejections'] = [];
	/** Every rejection's reason, grouped as /errors groups them: what a dry run answers. */
	readonly reasons = new ReasonTally();
	/** The first accepted row as the snapshot keeps it: what a test send sends (testSend.ts). */
	firstAccepted?: string;
	private staged = nothingStaged();
	/** A windowed campaign's per-zone lists (undefined without a window). */
	readonly zones?: ZoneLists;
	/** An A/B test's accepted recipients per draw: [0] the winner's remainder, [v] variant v's test share. */
	readonly variantCounts: number[];

	constructor(
		private readonly firstIndex: number,
		private readonly rejectionsShown: number,
		zones?: ZoneFinder,
		zoneTable?: ZoneTable,
		private readonly abTest?: AbTestSettings,
	) {
		if (zones) this.zones = new ZoneLists(zones, zoneTable);
		this.variantCounts = new Array<number>((abTest?.variants.length ?? 0) + 1).fill(0);
	}

	/**
	 * An accepted row's variant (1 to k in the test, 0 the remainder), drawn from its phone and the
	 * seed. Any variant may win, so the row must hold every variable a variant declares: a row
	 * lacking one refuses the whole create, its line and the variable named.
	 */
	private drawVariant(recipient: Recipient): number | undefined {
		const test = this.abTest;
		if (!test) return undefined;
		for (const [i, variant] of test.variants.entries())
			for (const name of variant.variables)
				if (recipient.variables?.[name] === undefined)
					throw new SourceError(
						`line ${recipient.line} has no value for the variable ${name}, which variant ${i + 1} ` +
							`(template ${variant.templateId}) declares: every recipient may get any variant`,
					);
		const drawn = variantOf({ seed: test.seed, share: test.share, variants: test.variants.length }, recipient.phone);
		const variant = drawn === undefined ? 0 : drawn + 1;
		this.variantCounts[variant]++;
		return variant;
	}

	/**
	 * `suppressed`: of the batch's phones, those on the suppression
	 * list, with their note (none for a transactional campaign).
	 */
	check(record: SourceRecord, seen: Map<string, number>, suppressed: ReadonlyMap<string, string> = new Map()): void {
		const index = String(this.firstIndex + this.total++);
		this.lastLine = Math.max(this.lastLine, record.line);
		let verdict;
		this.columns ??= record.columns;
		let zone: ZoneVerdict | undefined;
		if (record.ok) {
			if (record.fields.phone !== undefined) this.anyPhoneField = true;
			let fields = record.fields;
			if (this.zones) {
				// With a window, `tz` is the row's time zone, not a template variable.
				const { tz, ...rest } = fields;
				fields = rest;
				const phone = rowPhone(fields);
				if (phone !== undefined) zone = this.zones.finder.zoneOf(phone, tz);
			}
			verdict =
				zone && !zone.ok
					? { ok: false as const, line: record.line, phone: String(fields.phone), reason: zone.reason }
					: checkRow(record.line, fields, seen, record.columns);
		} else {
			verdict = { ok: false as const, line: record.line, phone: record.phone ?? '', reason: record.reason };
		}
		const note = verdict.ok ? suppressed.get(verdict.recipient.phone) : undefined;
		if (verdict.ok && note !== undefined) {
			// Kept whole (its phone in the phone index too, so a repeat is still found), never sent.
			this.suppressed++;
			this.reasons.add('suppressed', note);
			this.staged.recipients.push(index, encodeRecipient(verdict.recipient));
			this.staged.ledger.push(index, encodeRecord({ outcome: 'suppressed', attempts: 0, ref: '', error: note }));
			this.staged.phones.push(verdict.recipient.phone, `${verdict.recipient.line}:${index}`);
		} else if (verdict.ok) {
			this.accepted++;
			const variant = this.drawVariant(verdict.recipient);
			const row = encodeRecipient(variant === undefined ? verdict.recipient : { ...verdict.recipient, variant });
			this.firstAccepted ??= row;
			this.staged.recipients.push(index, row);
			this.staged.ledger.push(index, PENDING_RECORD);
			this.staged.phones.push(verdict.recipient.phone, `${verdict.recipient.line}:${index}`);
			if (zone?.ok) this.zones?.add(zone.key, index, this.staged);
		} else {
			this.rejected++;
			this.reasons.add('rejected', verdict.reason);
			if (this.rejections.length < this.rejectionsShown)
				this.rejections.push({ line: verdict.line, phone: verdict.phone, reason: verdict.reason });
			this.staged.recipients.push(index, encodeRecipient({ line: verdict.line, phone: verdict.phone }));
			this.staged.ledger.push(
				index,
				encodeRecord({ outcome: 'rejected', attempts: 0, ref: '', error: `line ${verdict.line}: ${verdict.reason}` }),
			);
		}
	}

	/** What the rows staged since the last take; `last`: no row follows (a zone's unfinished chunk is staged too). */
	take(last = false): StagedRows {
		if (last) this.zones?.closeAll(this.staged);
		const staged = this.staged;
		this.staged = nothingStaged();
		return staged;
	}
}

export interface SnapshotInput extends CampaignBasics {
	id: string;
	state: CampaignState;
	startAt?: number;
	scheduleId?: string;
	/** Records already at hand (an upload, inline rows); otherwise `source` is read. */
	records?: AsyncIterable<SourceRecord>;
	/** A draft: the state `start` moves it to, when it is removed unless started, and the phone its start tests with. */
	draft?: { startsAs: 'running' | 'scheduled'; expiresAt: number; testTo?: string };
	/**
	 * Done after every row is staged and right before the commit (a test send, the start job of a
	 * scheduled campaign); gets the first accepted row.
	 */
	beforeCommit?: (firstAccepted: string | undefined) => Promise<void>;
	/**
	 * The Idempotency-Key the create runs under (core/campaigns.ts
	 * once): the commit keeps `answer` + the snapshot as its answer.
	 */
	claim?: { slot: string; token: string; answer: Record<string, unknown> };
	/**
	 * A dry run: every row is read and checked as above, but only the staged phone index is written
	 * (it finds the repeats, as in a real create) and it is deleted at the end; no beforeCommit, no
	 * commit, no campaign. docs/decisions/campaigns/create-dry-run-is-a-mode-of-create.md.
	 */
	dryRun?: boolean;
}

/** How many reason groups a dry run answers (as many as /errors shows). */
const REASONS_SHOWN = 20;

/**
 * What a dry run found: the snapshot's counts and first rejections, and every rejection's reason
 * grouped; `capped`: accepted rows whose phone the frequency cap would hold back now (audience/cap.ts).
 */
export type DryRunSnapshot = Omit<Snapshot, 'id' | 'state'> & {
	reasons: ErrorGroup[];
	zones?: ZoneTable;
	capped: number;
	/** An A/B test's split: [0] the remainder, [v] variant v's test recipients. */
	variantCounts?: number[];
	/** Accepted rows whose phone is counted under the daily messaging limit now: they draw nothing more. */
	alreadyCounted: number;
};

/** Staged rows live this long past their last write: a create that died midway leaves them to expire. */
const STAGING_TTL_MS = 15 * 60_000;
/** A dry run's phone index lives this long past its last write, should its process die before deleting it. */
const DRY_RUN_TTL_MS = 2 * 60_000;

/** Throws the first failed step of a pipeline. */
function failedStep(results: Array<[Error | null, unknown]> | null): void {
	const failed = results?.find(([error]) => error);
	if (failed) throw failed[0];
}

/**
 * Reads and checks every row, staging them under keys nothing reads (keys.staging), then makes
 * the campaign exist in one script (lua/commitCampaign-13.lua) between registering and listing it (keyGroups.ts).
 * A process that dies before the commit leaves no campaign and staged keys that expire; one that
 * dies after it leaves a whole campaign that the feeder sends (and lists).
 */
export async function snapshotCampaign(
	context: RunnerContext,
	input: SnapshotInput & { dryRun: true },
): Promise<DryRunSnapshot>;
export async function snapshotCampaign(context: RunnerContext, input: SnapshotInput): Promise<Snapshot>;
export async function snapshotCampaign(
	context: RunnerContext,
	input: SnapshotInput,
): Promise<Snapshot | DryRunSnapshot> {
	const { redis, keys } = context;
	const { id, draft, dryRun } = input;
	const staging = keys.staging(input.from, id, randomBytes(6).toString('hex'));
	const clockOffset = context.config.RUNNER_TEST_CLOCK_OFFSET_MS;
	const rows = new RowChecker(
		0,
		REJECTIONS_SHOWN,
		input.window && new ZoneFinder(input.window, Date.now() + clockOffset),
		undefined,
		input.abTest,
	);
	let capped = 0;
	let alreadyCounted = 0;
	// Under a daily messaging limit (audience/budget.ts), a dry run counts the phones counted already.
	const limited = dryRun && (await showBudget(context)).limit !== UNLIMITED;
	/**
	 * Each batch of rows: its phones are looked up in the staged phone index (one HMGET: phone -> first line),
	 * it is checked, and what it stages is written (one pipeline), before the next batch is read.
	 * A repeat is found however far back its first row is, and the process keeps no phone beyond
	 * the batch at hand, so its memory does not grow with the audience.
	 */
	const flush = async (last = false) => {
		const staged = rows.take(last);
		if (staged.ledger.length === 0 && staged.zones.length === 0) return;
		if (dryRun) {
			// The phone index only: what finds a repeat however far back its first row is. Short-lived
			// (renewed at every batch, accepted rows or not), deleted at the end.
			const batch = redis.pipeline();
			if (staged.phones.length > 0) batch.hset(staging.phones, ...staged.phones);
			failedStep(await batch.pexpire(staging.phones, DRY_RUN_TTL_MS).exec());
			// The accepted rows' phones the cap would hold back if they were claimed now: not a
			// transactional campaign's (it is not capped), nor a suppressed row's (it is never sent).
			const waits = input.whenCapped === 'wait' ? ' (the campaign would wait until allowed)' : '';
			const suppressedIndexes = new Set<string>();
			for (let i = 0; i < staged.ledger.length; i += 2)
				if (staged.ledger[i + 1].startsWith('z|')) suppressedIndexes.add(staged.ledger[i]);
			const sendable = input.transactional
				? []
				: staged.phones.filter((_, i) => i % 2 === 0 && !suppressedIndexes.has(staged.phones[i + 1].split(':')[1]));
			// Every send draws from the daily limit, a transactional campaign's too; a suppressed row is never sent.
			if (limited)
				alreadyCounted += await phonesCounted(
					context,
					staged.phones.filter((_, i) => i % 2 === 0 && !suppressedIndexes.has(staged.phones[i + 1].split(':')[1])),
				);
			for (const rule of await wouldCap(context, input.from, sendable)) {
				if (rule === '') continue;
				capped++;
				rows.reasons.add('capped', `frequency cap ${rule}${waits}`);
			}
			return;
		}
		const batch = redis.pipeline();
		if (staged.ledger.length > 0)
			batch.hset(staging.recipients, ...staged.recipients).hset(staging.ledger, ...staged.ledger);
		if (staged.phones.length > 0) batch.hset(staging.phones, ...staged.phones);
		if (staged.zones.length > 0) batch.hset(staging.zones, ...staged.zones).pexpire(staging.zones, STAGING_TTL_MS);
		failedStep(
			await batch
				.pexpire(staging.recipients, STAGING_TTL_MS)
				.pexpire(staging.ledger, STAGING_TTL_MS)
				.pexpire(staging.phones, STAGING_TTL_MS)
				.exec(),
		);
	};
	let pending: SourceRecord[] = [];
	const checkPending = async (last = false) => {
		const phones = phonesOf(pending);
		const seen = phonesSeen(phones, phones.length > 0 ? await redis.hmget(staging.phones, ...phones) : []);
		const suppressed = input.transactional ? undefined : await suppressedNotes(context, phones);
		for (const record of pending) rows.check(record, seen, suppressed);
		pending = [];
		await flush(last);
	};
	const dropStaged = () => redis.unlink(staging.recipients, staging.ledger, staging.phones, staging.zones);
	// Past the cap of numbers holding a copy of the suppression list, refused before any row is read.
	if (!dryRun) await reserveCopy(context, input.from);

	// A file or URL named .tsv or .txt is read with tabs unless a delimiter was given (source.ts).
	const delimiterRead = input.records ? input.delimiter : csvDelimiterFor(input.source, input.delimiter);
	try {
		const records = cappedRows(
			input.records ??
				readRecords(
					input.source,
					formatOf(input.source, input.format, FORMAT_TOLD),
					undefined,
					undefined,
					context.config,
					{ delimiter: input.delimiter },
				),
			context.config.RUNNER_MAX_RECIPIENTS,
		);
		let batches = 0;
		for await (const record of records) {
			pending.push(record);
			if (pending.length < WRITE_BATCH) continue;
			await checkPending();
			if (++batches % COLLECT_EVERY_BATCHES === 0) collectGarbage?.();
		}
		await checkPending(true);
		// A draft may start empty: its rows come in chunks.
		if (rows.total === 0 && !draft) throw new SourceError(`${shownUrl(input.source)} is empty: it holds no recipient`);
		if (rows.total > 0 && !rows.anyPhoneField)
			throw new SourceError(
				`${shownUrl(input.source)} has no "phone" column or field: ` +
					`every recipient needs one (digits with country code)${columnsRead(
						rows.columns,
						delimiterRead,
						!input.records && input.delimiter === undefined && delimiterRead !== undefined,
					)}`,
			);
		if (!dryRun) await input.beforeCommit?.(rows.firstAccepted);
	} catch (error) {
		await dropStaged().catch(() => undefined);
		if (error instanceof SourceError) throw new UserError(`Nothing was created: ${error.message}`);
		throw error;
	}
	if (dryRun) {
		await dropStaged();
		return {
			name: input.name,
			total: rows.total,
			accepted: rows.accepted,
			rejected: rows.rejected,
			suppressed: rows.suppressed,
			capped,
			alreadyCounted,
			rejections: rows.rejections,
			reasons: rows.reasons.top(REASONS_SHOWN),
			zones: rows.zones?.table,
			...(input.abTest ? { variantCounts: rows.variantCounts } : {}),
		};
	}

	const { total, accepted, rejected, suppressed, rejections } = rows;
	const state: CampaignState = accepted === 0 && !draft ? 'completed' : input.state;
	const now = Date.now();
	const counters = Object.fromEntries(OUTCOMES.map((outcome) => [counterField(outcome), 0]));
	const fields: Record<string, string | number> = {
		...counters,
		[counterField('pending')]: accepted,
		[counterField('rejected')]: rejected,
		[counterField('suppressed')]: suppressed,
		id,
		name: input.name,
		state,
		template_id: input.templateId,
		from: input.from,
		agent_id: input.agentId ?? '',
		rate: input.rate,
		// Origin and path only: the whole URL (credentials, query) is never kept in the campaign.
		source: shownUrl(input.source),
		schedule_id: input.scheduleId ?? '',
		start_at: input.startAt ?? '',
		created_at: now,
		finished_at: state === 'completed' ? now : '',
		total,
		cursor: 0,
		last_progress_at: now,
		failure_streak: 0,
		last_error: '',
		...(input.window ? { window: encodeWindow(input.window), zones: JSON.stringify(rows.zones?.table ?? []) } : {}),
		...(input.endAt !== undefined ? { end_at: input.endAt } : {}),
		...(clockOffset !== 0 ? { clock_offset: clockOffset } : {}),
		// Exempt from the suppression list (and the marketing-only rules): ledger.ts reads it in the claim.
		...(input.transactional ? { transactional: 1 } : {}),
		// Only a campaign that waits out the frequency cap says so (audience/cap.ts reads it at each claim).
		...(input.whenCapped === 'wait' ? { when_capped: 'wait' } : {}),
		...(input.abTest ? abTestFields(input.abTest, rows.variantCounts) : {}),
		...(draft
			? {
					start_state: draft.startsAs,
					expires_at: draft.expiresAt,
					last_line: rows.lastLine,
					test_to: draft.testTo ?? '',
				}
			: {}),
	};
	const snapshot: Snapshot = { id, name: input.name, state, total, accepted, rejected, suppressed, rejections };
	const { claim } = input;
	const { from } = input;
	await registerCampaign(context, id, from);
	// Changes to the list from now on reach this number's copy; those before, the repair brings.
	await openCopy(context, from, id);
	const commit = redisScript(redis, 'commitCampaign');
	const outcome = await commit(
		[
			keys.campaign(from, id),
			keys.recipients(from, id),
			keys.ledger(from, id),
			keys.phones(from, id),
			staging.recipients,
			staging.ledger,
			staging.phones,
			keys.running(from),
			keys.unlisted(from),
			keys.outbox(from),
			claim?.slot ?? keys.campaign(from, id),
			staging.zones,
			keys.zoneIndexes(from, id),
		],
		[
			id,
			now,
			state,
			total,
			draft ? draft.expiresAt : '',
			claim ? JSON.stringify({ ...claim.answer, ...snapshot }) : '',
			claim?.token ?? '',
			IDEMPOTENCY_SECONDS,
			...Object.entries(fields).flat(),
		],
	);
	if (outcome === 'exists') throw new ConflictError(`Campaign ${id} exists already; nothing was created again`);
	// Nothing was committed under this id: its home goes too (a process that dies here leaves it, which names nothing).
	if (outcome !== 'ok') await forgetCampaign(context, id).catch(() => undefined);
	if (outcome === 'lease_lost')
		throw new ConflictError(
			'this request took longer than its Idempotency-Key lease and another request with the key runs now; ' +
				'nothing was created by this one',
		);
	if (outcome === 'expired')
		throw new UserError(
			`Nothing was created: the rows read were kept ${STAGING_TTL_MS / 60_000} minutes and ` +
				'expired before the source ended',
		);
	await listOrLeave(context, from, id, now);
	return snapshot;
}

/**
 * Lists a committed campaign; when Redis fails here the campaign
 * exists all the same, and the feeder lists it (keyGroups.ts).
 */
export async function listOrLeave(context: RunnerContext, from: string, id: string, createdAt: number): Promise<void> {
	await listCampaign(context, from, id, createdAt).catch((error: Error) =>
		context.log.warn({ campaign: id, err: error.message }, 'campaign created; it is listed on the next feeder tick'),
	);
}

/** campaign.finished for a campaign of `from` that ended as it was created (a skipped firing). */
export async function emitBornFinished(context: RunnerContext, from: string, id: string): Promise<void> {
	const emit = redisScript(context.redis, 'emit');
	await emit([context.keys.campaign(from, id), context.keys.outbox(from)], [id, 'campaign.finished', Date.now()]);
}
