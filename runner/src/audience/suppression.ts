/**
 * The business's suppression list: phones that opted out (a keyword), or that an operator, a
 * workflow or an import put there. Each entry keeps its reason, source and time. A campaign keeps
 * a suppressed phone's row as `suppressed` at create (create.ts) and checks the list again in the
 * claim step before each send (ledger.ts suppressedVerdict), so an opt-out that arrives mid-campaign
 * holds from the next send; a campaign marked transactional is exempt from both.
 *
 * Where it lives (keys.ts suppression): the list itself in the global group, and a copy of it
 * (phone -> the note the claim writes) in each number's group, since a claim's script runs in its
 * number's slot of a Redis Cluster. Every change takes a version of its own in the global group
 * (phone -> version of its last change), then goes to every number's copy; a copy records the
 * version it holds every change up to, advanced only when a change lands right after it. A copy a
 * crash left behind (the process died between the global write and the copies), or a number that
 * had none, replays the changes since its version: the feeder's tick checks each number's version
 * (one GET per number) and a create checks its number's before its commit. A change costs one
 * script per number; a send nothing but one HGET in its claim; nothing copies the whole list but a
 * new number's first campaign.
 */
import { parsePhoneNumber, SUPPRESSION_SOURCES } from 'convo-contract';

import { FieldError, UserError, type RunnerContext } from '../context';
import { luaScript } from '../redis';
import { cappedRows } from '../limits';
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
	const text = typeof given === 'string' || typeof given === 'number' ? String(given).replace(CONTROL, ' ').replace(/\s+/g, ' ').trim() : '';
	return text === '' ? DEFAULT_REASON[source] : text.slice(0, REASON_MAX);
}

/**
 * KEYS: entries, listed, changed, version (the global group). ARGV: 'add' or 'remove', then
 * phones (add: phone, its time in ms, its stored entry, and so on). Adds the phones not listed yet
 * (a phone already listed keeps its first entry), or removes those listed; each change takes the
 * next version. Returns { first version, last version, then for each change its phone and its
 * stored entry ('' for a removal) }, or { 0, 0 } when nothing changed.
 */
const CHANGE = `
local entries, listed, changed, version = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local add = ARGV[1] == 'add'
local step = add and 3 or 1
local out = {}
for i = 2, #ARGV, step do
  local phone = ARGV[i]
  if add then
    if redis.call('HSETNX', entries, phone, ARGV[i + 2]) == 1 then
      redis.call('ZADD', listed, ARGV[i + 1], phone)
      out[#out + 1] = phone; out[#out + 1] = ARGV[i + 2]
    end
  elseif redis.call('HDEL', entries, phone) == 1 then
    redis.call('ZREM', listed, phone)
    out[#out + 1] = phone; out[#out + 1] = ''
  end
end
if #out == 0 then return { 0, 0 } end
local last = redis.call('INCRBY', version, #out / 2)
local first = last - #out / 2 + 1
for i = 1, #out, 2 do redis.call('ZADD', changed, first + (i - 1) / 2, out[i]) end
return { first, last, unpack(out) }
`;

/**
 * KEYS: a number's copy and its version (the number's group). ARGV: the version the changes follow
 * and the one they bring the copy to ('' '' to change nothing but the phones), then phone, note
 * pairs ('' removes). The copy's version moves only when it was `after`: a change that finds a gap
 * before it (one a crash lost) leaves the version where it is, so the next repair replays the gap.
 */
const APPLY = `
local copy, at = KEYS[1], KEYS[2]
for i = 3, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', copy, ARGV[i]) else redis.call('HSET', copy, ARGV[i], ARGV[i + 1]) end
end
if ARGV[1] ~= '' and tonumber(redis.call('GET', at) or '0') == tonumber(ARGV[1]) then redis.call('SET', at, ARGV[2]) end
return 1
`;

/**
 * An entry as the list stores it: `source|ms|reason` (a third of its JSON's bytes at a million
 * entries; the reason, last, may hold "|").
 */
const storedForm = (source: SuppressionSource, ms: number, reason: string) => `${source}|${ms}|${reason}`;

function entryOf(phone: string, stored: string): SuppressionEntry {
	const [source, ms] = stored.split('|', 2);
	return { phone, source: source as SuppressionSource, at: new Date(Number(ms)).toISOString(), reason: stored.slice(source.length + ms.length + 2) };
}

const noteOf = (stored: string) => (stored === '' ? '' : suppressionNote(entryOf('', stored)));

/** The list's change in the global group, then in every number's copy. Returns the phones that changed. */
async function change(context: RunnerContext, op: 'add' | 'remove', args: string[]): Promise<string[]> {
	const { redis, keys } = context;
	const run = luaScript(redis, 'convoSuppressionChange', CHANGE, 4);
	const reply = (await run([keys.suppression.entries, keys.suppression.listed, keys.suppression.changed, keys.suppression.version], [op, ...args])) as [number, number, ...string[]];
	const [first, last, ...changes] = reply;
	if (Number(last) === 0) return [];
	const pairs = changes.flatMap((value, i) => (i % 2 === 0 ? [value] : [noteOf(value)]));
	const numbers = await redis.smembers(keys.numbers);
	await Promise.all(numbers.map((from) => applyToCopy(context, from, [String(Number(first) - 1), String(last), ...pairs])));
	return changes.filter((_, i) => i % 2 === 0);
}

function applyToCopy(context: RunnerContext, from: string, args: string[]): Promise<unknown> {
	const apply = luaScript(context.redis, 'convoSuppressionApply', APPLY, 2);
	return apply([context.keys.suppression.copy(from), context.keys.suppression.copyVersion(from)], args);
}

/**
 * Brings the number's copy up to the list's version: the phones changed since the copy's version,
 * as the list has them now (a page at a time, by version), then the version. Returns the phones
 * replayed. A phone changed again meanwhile gets a version past the one read here, so a copy this
 * leaves wrong for it is behind and the next repair replays it.
 */
export async function repairCopy(context: RunnerContext, from: string, listVersion?: number): Promise<number> {
	const { redis, keys } = context;
	const target = listVersion ?? Number((await redis.get(keys.suppression.version)) ?? 0);
	const base = Number((await redis.get(keys.suppression.copyVersion(from))) ?? 0);
	if (base >= target) return 0;
	let after = base;
	let replayed = 0;
	for (;;) {
		const page = await redis.zrangebyscore(keys.suppression.changed, `(${after}`, target, 'WITHSCORES', 'LIMIT', 0, BATCH);
		if (page.length === 0) break;
		const phones = page.filter((_, i) => i % 2 === 0);
		const entries = await redis.hmget(keys.suppression.entries, ...phones);
		await applyToCopy(context, from, ['', '', ...phones.flatMap((phone, i) => [phone, noteOf(entries[i] ?? '')])]);
		replayed += phones.length;
		after = Number(page.at(-1));
		if (phones.length < BATCH) break;
	}
	await applyToCopy(context, from, [String(base), String(target)]);
	if (replayed > 0) context.log.info({ number: from, replayed, version: target }, 'suppression list: a number\'s copy brought up to date');
	return replayed;
}

/** The feeder's repair: every number whose copy is behind the list's version is brought up to it (one GET per number otherwise). */
export async function repairCopies(context: RunnerContext, numbers: readonly string[]): Promise<void> {
	const { redis, keys } = context;
	const version = Number((await redis.get(keys.suppression.version)) ?? 0);
	if (version === 0) return;
	const versions = await Promise.all(numbers.map((from) => redis.get(keys.suppression.copyVersion(from))));
	for (const [i, from] of numbers.entries()) if (Number(versions[i] ?? 0) < version) await repairCopy(context, from, version);
}

/** The phone as a client typed it, in digits; a wrong one is refused naming `field` (`<phone>`, `phone`, Phone). */
export function phoneOf(input: string, field: string): string {
	const parsed = parsePhoneNumber(input);
	if (!parsed.ok) throw new FieldError(`${field} ${parsed.rule}`, field);
	return parsed.digits;
}

/** CHANGE's arguments for adding `phone`: the phone, its time, its stored entry. */
function addition(phone: string, source: SuppressionSource, reason: unknown, now = Date.now()): string[] {
	if (!SUPPRESSION_SOURCES.includes(source)) throw new UserError(`source must be one of ${SUPPRESSION_SOURCES.join(', ')}`);
	return [phone, String(now), storedForm(source, now, reasonOf(reason, source))];
}

/** Puts a phone (digits) on the list; one already there keeps its entry. Answers the entry and whether this call added it. */
export async function suppress(context: RunnerContext, phone: string, how: { source: SuppressionSource; reason?: string }): Promise<SuppressionEntry & { added: boolean }> {
	const added = (await change(context, 'add', addition(phone, how.source, how.reason))).length > 0;
	const entry = await findSuppression(context, phone);
	if (!entry) throw new Error(`suppression of ${phone} was not kept`);
	return { ...entry, added };
}

/** Takes a phone (digits) off the list; false when it was not on it. */
export async function unsuppress(context: RunnerContext, phone: string): Promise<boolean> {
	return (await change(context, 'remove', [phone])).length > 0;
}

export async function findSuppression(context: RunnerContext, phone: string): Promise<SuppressionEntry | undefined> {
	const stored = await context.redis.hget(context.keys.suppression.entries, phone);
	return stored === null ? undefined : entryOf(phone, stored);
}

/** Of `phones` (digits), those on the list, with the note a recipient row gets: one HMGET (the create's check, per batch of rows). */
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
export async function pageSuppressions(context: RunnerContext, page: { offset: number; limit: number }): Promise<SuppressionPage> {
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

/** Rows with a `phone` column (and optionally `reason`) put on the list as `import`; a bad row is reported with its line, the good ones kept. */
export async function importSuppressions(context: RunnerContext, records: AsyncIterable<SourceRecord>): Promise<ImportAnswer> {
	const answer: ImportAnswer = { rows: 0, added: 0, already: 0, rejected: 0, rejections: [] };
	const reject = (line: number, reason: string) => {
		answer.rejected++;
		if (answer.rejections.length < REJECTIONS_SHOWN) answer.rejections.push({ line, reason });
	};
	let batch: string[] = [];
	const flush = async () => {
		if (batch.length === 0) return;
		const added = (await change(context, 'add', batch)).length;
		answer.added += added;
		answer.already += batch.length / 3 - added;
		batch = [];
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
	if (answer.rows === 0) throw new UserError('the file holds no row: give a CSV with a phone column (and optionally reason)');
	return answer;
}
