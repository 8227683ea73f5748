/**
 * The business's suppression list: phones that opted out (a keyword), or that an operator, a
 * workflow or an import put there. Each entry keeps its reason, source and time. A campaign keeps
 * a suppressed phone's row as `suppressed` at create (create.ts) and checks the list again in the
 * claim step before each send (ledger.ts suppressedVerdict), so an opt-out that arrives mid-campaign
 * holds from the next send; a campaign marked transactional is exempt from both.
 *
 * Where it lives (keys.ts suppression): the list itself in the global group, and a copy of it
 * (phone -> the note the claim writes) in the group of each number with a campaign not finished,
 * since a claim's script runs in its number's slot of a Redis Cluster. Every change takes a version
 * of its own in the global group (phone -> version of its last change), then goes to every copy; a
 * copy records the version it holds every change up to, advanced only when a change lands right
 * after it (APPLY). A copy a crash left behind (the process died between the global write and the
 * copies), or a number's new copy, replays the changes since its version: the next change that
 * finds the gap, the feeder's tick (one GET per number) and a create before its commit. A change
 * costs one script per number holding a copy; a send nothing but one HGET in its claim; nothing
 * copies the whole list but a campaign of a number holding none. The feeder deletes a number's copy
 * once its campaigns have all finished, and prunes the changes every copy holds (repairCopies).
 *
 * Keywords (applyKeyword): a phone's newest opt-out or opt-in message, by its own time, decides; an
 * opt-in lifts only a keyword's entry.
 */
import { parsePhoneNumber, SUPPRESSION_SOURCES } from 'convo-contract';

import type { RunnerContext } from '../context';
import { FieldError, UserError } from '../errors';
import { redisScript } from '../redisScripts';
import { cappedRows, LimitError } from '../limits';
import type { SourceRecord } from '../source';

export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];

export interface SuppressionEntry {
	phone: string;
	reason: string;
	source: SuppressionSource;
	/** ISO 8601. */
	at: string;
}

/** The longest reason kept: a note read in a report, not a document. */
const REASON_MAX = 200;
/** Phones written per script and read per page (import, list walk, a copy's repair). */
const BATCH = 1000;
/** How many rejected rows an import lists (every one is counted). */
const REJECTIONS_SHOWN = 20;

/** The reason an entry gets when none is given, by source. */
const DEFAULT_REASON: Record<SuppressionSource, string> = {
	keyword: 'replied with an opt-out keyword',
	operator: 'added by an operator',
	workflow: 'added by a workflow',
	import: 'imported',
};

/** What a suppressed recipient's row says (the create's and the claim's alike): the reason, its source and time. */
function suppressionNote(entry: SuppressionEntry): string {
	return `on the suppression list: ${entry.reason} (${entry.source}, ${entry.at})`;
}

// eslint-disable-next-line no-control-regex -- the control characters are what this finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** A reason as given, made one line and cut to REASON_MAX; the source's default when empty. */
function reasonOf(given: unknown, source: SuppressionSource): string {
	const text =
		typeof given === 'string' || typeof given === 'number'
			? String(given).replace(CONTROL, ' ').replace(/\s+/g, ' ').trim()
			: '';
	return text === '' ? DEFAULT_REASON[source] : text.slice(0, REASON_MAX);
}

/**
 * How long a campaign may take from its number's copy opening to its commit (create.ts keeps staged rows this long).
 */
const COMMIT_GRACE_MS = 15 * 60_000;
/** Passes of a repair that other changes keep moving before it leaves the rest to the feeder's next tick. */
const REPAIR_PASSES = 5;

/**
 * An entry as the list stores it: `source|ms|reason` (a third of its JSON's bytes at a million
 * entries; the reason, last, may hold "|"). A keyword's entry keeps its message's time.
 */
const storedForm = (source: SuppressionSource, ms: number, reason: string) => `${source}|${ms}|${reason}`;

function entryOf(phone: string, stored: string): SuppressionEntry {
	const [source, ms] = stored.split('|', 2);
	return {
		phone,
		source: source as SuppressionSource,
		at: new Date(Number(ms)).toISOString(),
		reason: stored.slice(source.length + ms.length + 2),
	};
}

const noteOf = (stored: string) => (stored === '' ? '' : suppressionNote(entryOf('', stored)));

/** The error of an add past the cap; it names the cap and its setting, never a phone. */
function listFullMessage(max: number): string {
	return (
		`the suppression list is full: it holds its limit of ${max} entries (RUNNER_MAX_SUPPRESSIONS); remove entries, ` +
		'or ask the operator to raise RUNNER_MAX_SUPPRESSIONS'
	);
}

type ChangeReply = [number | string, number | string, number | string, ...string[]];

/**
 * The list's change (CHANGE) in the global group, then in every copy. Returns the phones that
 * changed and how many adds the cap refused.
 */
async function change(
	context: RunnerContext,
	op: 'add' | 'remove',
	args: string[],
): Promise<{ changed: string[]; full: number }> {
	const { redis, keys } = context;
	const run = redisScript(redis, 'changeSuppression');
	const reply = (await run(
		[keys.suppression.entries, keys.suppression.listed, keys.suppression.changed, keys.suppression.version],
		[op, context.config.RUNNER_MAX_SUPPRESSIONS, ...args],
	)) as ChangeReply;
	const [first, last, full, ...changes] = reply;
	await toCopies(context, Number(first), Number(last), changes);
	return { changed: changes.filter((_, i) => i % 2 === 0), full: Number(full) };
}

/**
 * A change of versions first..last (phone, stored pairs) into every number's copy. A copy it finds
 * with a change before it missing is repaired at once, so the copy is right when this returns
 * unless changes keep coming (the feeder's tick then finishes it).
 */
async function toCopies(context: RunnerContext, first: number, last: number, changes: string[]): Promise<void> {
	if (last === 0) return;
	const pairs = changes.flatMap((value, i) => (i % 2 === 0 ? [value] : [noteOf(value)]));
	const numbers = await context.redis.smembers(context.keys.suppression.copies);
	await Promise.all(
		numbers.map(async (from) => {
			if ((await applyToCopy(context, from, ['change', String(first - 1), String(last), ...pairs])) === 'gap')
				await repairCopy(context, from, last);
		}),
	);
}

async function applyToCopy(context: RunnerContext, from: string, args: string[]): Promise<string> {
	const apply = redisScript(context.redis, 'applySuppressions');
	return String(await apply([context.keys.suppression.copy(from), context.keys.suppression.copyVersion(from)], args));
}

/**
 * Brings the number's copy up to the list's version (or `listVersion`): the phones changed since
 * the copy's version, as the list has them now (a page at a time, by version), then the version.
 * A change that moves the copy meanwhile makes it go again from there. Returns the phones replayed.
 */
export async function repairCopy(context: RunnerContext, from: string, listVersion?: number): Promise<number> {
	const { redis, keys } = context;
	const target = listVersion ?? Number((await redis.get(keys.suppression.version)) ?? 0);
	let replayed = 0;
	for (let pass = 0; pass < REPAIR_PASSES; pass++) {
		const at = await redis.get(keys.suppression.copyVersion(from));
		if (at === null) return replayed;
		const base = Number(at);
		if (base >= target) break;
		let after = base;
		let ahead = false;
		for (;;) {
			const page = await redis.zrangebyscore(
				keys.suppression.changed,
				`(${after}`,
				target,
				'WITHSCORES',
				'LIMIT',
				0,
				BATCH,
			);
			if (page.length === 0) break;
			const phones = page.filter((_, i) => i % 2 === 0);
			const entries = await redis.hmget(keys.suppression.entries, ...phones);
			if (
				(await applyToCopy(context, from, [
					'replay',
					String(target),
					...phones.flatMap((phone, i) => [phone, noteOf(entries[i] ?? '')]),
				])) === 'ahead'
			) {
				ahead = true;
				break;
			}
			replayed += phones.length;
			after = Number(page.at(-1));
			if (phones.length < BATCH) break;
		}
		if (ahead || (await applyToCopy(context, from, ['finish', String(base), String(target)])) === 'ok') break;
	}
	if (replayed > 0)
		context.log.info(
			{ number: from, replayed, version: target },
			"suppression list: a number's copy brought up to date",
		);
	return replayed;
}

/**
 * The feeder's care of the copies: a number whose campaigns have all finished lets its copy go; any
 * other copy behind the list's version is brought up to it (one GET per number otherwise).
 */
export async function repairCopies(context: RunnerContext): Promise<void> {
	const { redis, keys } = context;
	const numbers = await redis.smembers(keys.suppression.copies);
	const free = redisScript(redis, 'freeSuppressionCopy');
	const kept: string[] = [];
	for (const from of numbers) {
		const s = keys.suppression;
		if (
			Number(
				await free(
					[s.copy(from), s.copyVersion(from), s.copyUsers(from)],
					[keys.campaign(from, ''), Date.now() - COMMIT_GRACE_MS],
				),
			) === 1
		) {
			await redis.srem(s.copies, from);
			// A create that opened the copy again between the two steps keeps it where changes reach it.
			if ((await redis.exists(s.copyVersion(from))) === 1) await redis.sadd(s.copies, from);
			else continue;
		}
		kept.push(from);
	}
	const version = Number((await redis.get(keys.suppression.version)) ?? 0);
	if (version === 0) return;
	const versions = await Promise.all(kept.map((from) => redis.get(keys.suppression.copyVersion(from))));
	for (const [i, from] of kept.entries()) {
		if (versions[i] === null || Number(versions[i]) >= version) continue;
		await repairCopy(context, from, version);
		versions[i] = await redis.get(keys.suppression.copyVersion(from));
	}
	// Where every copy now stands: a copy opened after this starts empty and needs only what is listed.
	await pruneChanges(context, Math.min(version, ...versions.filter((at) => at !== null).map(Number)));
}

/** Phones looked at per call of pruneSuppressionChanges. */
const PRUNE_BATCH = 1000;

/**
 * Takes out of the list's changes the phones no longer listed whose last change every copy holds
 * (`upTo`: the lowest version a copy holds): without it a phone added and removed stayed there for
 * good, and churn grew it without bound. What is left: the listed phones (RUNNER_MAX_SUPPRESSIONS
 * at most) and the removals some copy has yet to apply. Returns the phones taken out. `batch`:
 * phones looked at per script call.
 */
export async function pruneChanges(context: RunnerContext, upTo: number, batch = PRUNE_BATCH): Promise<number> {
	const { keys } = context;
	const prune = redisScript(context.redis, 'pruneSuppressionChanges');
	let removed = 0;
	for (;;) {
		const [count, whole] = (await prune(
			[keys.suppression.changed, keys.suppression.entries, keys.suppression.pruned],
			[upTo, batch],
		)) as [number, number];
		removed += count;
		if (whole === 1) return removed;
	}
}

/**
 * The number may hold a copy: it holds one, or fewer than RUNNER_MAX_SENDING_NUMBERS numbers do (it
 * then joins them). A create asks before it reads its rows, and again as it opens the copy.
 */
export async function reserveCopy(context: RunnerContext, from: string): Promise<void> {
	const max = context.config.RUNNER_MAX_SENDING_NUMBERS;
	const reserve = redisScript(context.redis, 'reserveSuppressionCopy');
	if (Number(await reserve([context.keys.suppression.copies], [from, max])) !== 1) {
		throw new LimitError(
			409,
			`${max} sending numbers have campaigns that are not finished; ` +
				`at most ${max} may (RUNNER_MAX_SENDING_NUMBERS): let one number's campaigns finish or cancel them, ` +
				'or ask the operator to raise RUNNER_MAX_SENDING_NUMBERS',
			'from',
		);
	}
}

/**
 * A campaign of `from` takes (or keeps) the number's copy until it finishes, before any of its
 * claims: the number joins the numbers that hold one, the copy opens and is brought up to the list.
 * The number joins them again after the copy opened: the feeder's tick may have let it go between.
 */
export async function openCopy(context: RunnerContext, from: string, campaignId: string): Promise<void> {
	const { redis, keys } = context;
	await reserveCopy(context, from);
	const open = redisScript(redis, 'openSuppressionCopy');
	await open(
		[keys.suppression.copy(from), keys.suppression.copyVersion(from), keys.suppression.copyUsers(from)],
		[campaignId, Date.now()],
	);
	await redis.sadd(keys.suppression.copies, from);
	await repairCopy(context, from);
}

/**
 * Whether `to` is one of the business's numbers: one of RUNNER_NUMBERS when set, else a number the
 * business has created a campaign from. A keyword sent to any other number changes nothing.
 */
export async function businessNumber(context: RunnerContext, to: string): Promise<boolean> {
	const listed = context.config.RUNNER_NUMBERS;
	if (listed) return listed.includes(to);
	return (await context.redis.sismember(context.keys.numbers, to)) === 1;
}

/** The phone as a client typed it, in digits; a wrong one is refused naming `field` (`<phone>`, `phone`, Phone). */
export function phoneOf(input: string, field: string): string {
	const parsed = parsePhoneNumber(input);
	if (!parsed.ok) throw new FieldError(`${field} ${parsed.rule}`, field);
	return parsed.digits;
}

/** CHANGE's arguments for adding `phone`: the phone, its time, its stored entry. */
function addition(phone: string, source: SuppressionSource, reason: unknown, now = Date.now()): string[] {
	if (!SUPPRESSION_SOURCES.includes(source))
		throw new UserError(`source must be one of ${SUPPRESSION_SOURCES.join(', ')}`);
	return [phone, String(now), storedForm(source, now, reasonOf(reason, source))];
}

/**
 * Puts a phone (digits) on the list as an operator's, a workflow's or an import's: one already there
 * keeps its entry, unless a keyword put it there (this entry then replaces it, so a START no longer
 * lifts it). Answers the entry and whether this call wrote it; past the cap, a LimitError.
 */
export async function suppress(
	context: RunnerContext,
	phone: string,
	how: { source: Exclude<SuppressionSource, 'keyword'>; reason?: string },
): Promise<SuppressionEntry & { added: boolean }> {
	const args = addition(phone, how.source, how.reason);
	const { changed, full } = await change(context, 'add', args);
	if (full > 0) throw new LimitError(409, listFullMessage(context.config.RUNNER_MAX_SUPPRESSIONS), 'phone');
	const entry = await findSuppression(context, phone);
	// Removed again in between by another request: this call's entry is what it wrote.
	if (!entry) return { ...entryOf(phone, args[2]), added: changed.length > 0 };
	return { ...entry, added: changed.length > 0 };
}

/** Takes a phone (digits) off the list, whatever put it there; false when it was not on it. */
export async function unsuppress(context: RunnerContext, phone: string): Promise<boolean> {
	return (await change(context, 'remove', [phone])).changed.length > 0;
}

/** What a keyword message did to the list (KEYWORD): nothing for a stale or repeated one, or one already applied. */
export type KeywordOutcome = 'stale' | 'kept' | 'changed';

/**
 * A customer's opt-out or opt-in keyword, sent at `sentAtMs` (the message's own time): applied only
 * when it is the phone's newest keyword message (KEYWORD). An opt-out past the cap is a LimitError.
 */
export async function applyKeyword(
	context: RunnerContext,
	phone: string,
	intent: 'opt_out' | 'opt_in',
	sentAtMs: number,
): Promise<KeywordOutcome> {
	const { redis, keys, config } = context;
	const s = keys.suppression;
	const run = redisScript(redis, 'suppressionKeyword');
	const stored = storedForm('keyword', sentAtMs, DEFAULT_REASON.keyword);
	const [first, last, , outcome, ...changes] = (await run(
		[s.entries, s.listed, s.changed, s.version, s.keywords, s.keywordsAt],
		[phone, intent === 'opt_out' ? 'o' : 'i', sentAtMs, stored, config.RUNNER_MAX_SUPPRESSIONS],
	)) as [number, number, number, string, ...string[]];
	if (outcome === 'full') throw new LimitError(409, listFullMessage(config.RUNNER_MAX_SUPPRESSIONS));
	await toCopies(context, Number(first), Number(last), changes);
	return outcome as KeywordOutcome;
}

export async function findSuppression(context: RunnerContext, phone: string): Promise<SuppressionEntry | undefined> {
	const stored = await context.redis.hget(context.keys.suppression.entries, phone);
	return stored === null ? undefined : entryOf(phone, stored);
}

/**
 * Of `phones` (digits), those on the list, with the note a recipient row gets: one HMGET (the
 * create's check, per batch of rows).
 */
export async function suppressedNotes(context: RunnerContext, phones: readonly string[]): Promise<Map<string, string>> {
	const notes = new Map<string, string>();
	if (phones.length === 0) return notes;
	const entries = await context.redis.hmget(context.keys.suppression.entries, ...phones);
	phones.forEach((phone, i) => {
		const stored = entries[i];
		if (stored) notes.set(phone, noteOf(stored));
	});
	return notes;
}

export interface SuppressionPage {
	items: SuppressionEntry[];
	total: number;
	limit: number;
	offset: number;
}

/** A page of the list, newest first. */
export async function pageSuppressions(
	context: RunnerContext,
	page: { offset: number; limit: number },
): Promise<SuppressionPage> {
	const { redis, keys } = context;
	const phones = await redis.zrevrange(keys.suppression.listed, page.offset, page.offset + page.limit - 1);
	const entries = phones.length > 0 ? await redis.hmget(keys.suppression.entries, ...phones) : [];
	const items = phones.flatMap((phone, i) => (entries[i] ? [entryOf(phone, entries[i] as string)] : []));
	return { items, total: await redis.zcard(keys.suppression.listed), limit: page.limit, offset: page.offset };
}

/** The whole list, oldest first, a page at a time (memory stays flat for any size): what an export writes. */
export async function* allSuppressions(context: RunnerContext): AsyncGenerator<SuppressionEntry> {
	const { redis, keys } = context;
	for (let offset = 0; ; offset += BATCH) {
		const phones = await redis.zrange(keys.suppression.listed, offset, offset + BATCH - 1);
		if (phones.length === 0) return;
		const entries = await redis.hmget(keys.suppression.entries, ...phones);
		for (const [i, phone] of phones.entries()) if (entries[i]) yield entryOf(phone, entries[i] as string);
		if (phones.length < BATCH) return;
	}
}

export interface ImportAnswer {
	/** Rows read (the header not counted). */
	rows: number;
	/** Phones this import put on the list. */
	added: number;
	/** Good rows whose phone was on the list already (its entry kept), or twice in the file. */
	already: number;
	rejected: number;
	/** The first rejected rows: line and rule, never the row's bytes. */
	rejections: Array<{ line: number; reason: string }>;
}

/**
 * Rows with a `phone` column (and optionally `reason`) put on the list as `import`; a bad row is
 * reported with its line, the good ones kept.
 */
export async function importSuppressions(
	context: RunnerContext,
	records: AsyncIterable<SourceRecord>,
): Promise<ImportAnswer> {
	const answer: ImportAnswer = { rows: 0, added: 0, already: 0, rejected: 0, rejections: [] };
	const reject = (line: number, reason: string) => {
		answer.rejected++;
		if (answer.rejections.length < REJECTIONS_SHOWN) answer.rejections.push({ line, reason });
	};
	let batch: string[] = [];
	const flush = async () => {
		if (batch.length === 0) return;
		const { changed, full } = await change(context, 'add', batch);
		answer.added += changed.length;
		answer.already += batch.length / 3 - changed.length - full;
		batch = [];
		if (full > 0)
			throw new LimitError(
				409,
				`${listFullMessage(context.config.RUNNER_MAX_SUPPRESSIONS)}. The import stopped: ` +
					`${answer.added} phones were added, ${full} of the last rows read and every later row were not`,
			);
	};
	const now = Date.now();
	for await (const record of cappedRows(records, context.config.RUNNER_MAX_RECIPIENTS)) {
		answer.rows++;
		if (!record.ok) {
			reject(record.line, record.reason);
			continue;
		}
		const raw = record.fields.phone;
		if (raw === undefined || raw === null || String(raw).trim() === '') {
			reject(record.line, 'phone is missing');
			continue;
		}
		const parsed = parsePhoneNumber(String(raw));
		if (!parsed.ok) {
			reject(record.line, `phone ${parsed.rule}`);
			continue;
		}
		batch.push(...addition(parsed.digits, 'import', record.fields.reason, now));
		if (batch.length >= BATCH * 3) await flush();
	}
	await flush();
	if (answer.rows === 0)
		throw new UserError('the file holds no row: give a CSV with a phone column (and optionally reason)');
	return answer;
}
