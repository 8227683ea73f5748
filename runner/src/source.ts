/**
 * Reading a source, a local file or an http(s) URL, as a stream of records with their line numbers,
 * whatever the format: CSV (csv-parse), a JSON array (stream-json), or NDJSON (lines split here). Memory
 * stays flat in the size of the source. Shared by every job kind that reads a feed.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { PassThrough, Readable, type Duplex } from 'node:stream';

import { parse as parseCsv } from 'csv-parse';

import { csvDelimiterNamed, detectCsvDelimiter } from './csv';

import type { RunnerConfig } from './config';
import { FieldError } from './errors';
import { isNotAllowed, outboundFor } from './net/outbound';
import { isHttpUrl, shownUrl } from './net/urls';

import { LocalSourceError, openLocalSource, type SourceAccess } from './localFiles';

// stream-json 1.x is CommonJS; its typings describe the factory functions.
import StreamJson from 'stream-json';
import StreamArray from 'stream-json/streamers/StreamArray';

export type SourceFormat = 'csv' | 'json' | 'ndjson';
const SOURCE_FORMATS: readonly SourceFormat[] = ['csv', 'json', 'ndjson'];

export class SourceError extends Error {}

/**
 * One record of a source: its line (CSV: the file line, header = 1; NDJSON: the line; JSON array:
 * the position, first = 1). A CSV record has its header too: a reason names a cell by its column.
 */
export type SourceRecord =
	| { line: number; ok: true; fields: Record<string, unknown>; columns?: readonly string[] }
	| { line: number; ok: false; reason: string; phone?: string; columns?: readonly string[] };

/** Filled while a source is read: bytes so far, the size when known (file size, Content-Length). */
export interface SourceProgress {
	read: number;
	total?: number;
}

/** A record longer than this is rejected on its own (NDJSON: skipped without being held in memory). */
export const MAX_RECORD_BYTES = 1024 * 1024;

/**
 * Objects and arrays may nest this deep in a record (the record itself is level 1). Deeper rows
 * are rejected on their own: JSON.stringify, the content hash and the checks that walk a row
 * recurse, and a 200,000-deep row overflowed the stack and failed the whole run. Real feeds nest
 * a handful of levels.
 */
export const MAX_NESTING = 64;

/** Whether `value` nests objects and arrays deeper than MAX_NESTING, found without recursion. */
export function nestsTooDeep(value: unknown, limit = MAX_NESTING): boolean {
	const stack: Array<[unknown, number]> = [[value, 1]];
	while (stack.length > 0) {
		const [current, depth] = stack.pop() as [unknown, number];
		if (current === null || typeof current !== 'object') continue;
		if (depth > limit) return true;
		for (const child of Array.isArray(current) ? current : Object.values(current)) {
			if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
		}
	}
	return false;
}

/** A parsed value as a record of the source, or the rule it breaks (never its bytes). */
function recordOf(line: number, value: unknown): SourceRecord {
	if (value === null || typeof value !== 'object' || Array.isArray(value))
		return { line, ok: false, reason: 'is not a JSON object' };
	if (nestsTooDeep(value))
		return { line, ok: false, reason: `nests objects or arrays deeper than ${MAX_NESTING} levels` };
	return { line, ok: true, fields: value as Record<string, unknown> };
}

export const isUrl = isHttpUrl;

/** The extension of a file or URL's path, lower case (`.csv`). */
function extensionOf(source: string): string {
	return extname(isUrl(source) ? new URL(source).pathname : source).toLowerCase();
}

/** Tab-separated exports as spreadsheets name them (`.tsv`) and as some tools do (`.txt`): read as CSV with tabs. */
const TAB_SEPARATED = ['.tsv', '.txt'];

/** A CSV source's delimiter: the one given, a tab for a tab-separated name, else none (told from the header line). */
export function csvDelimiterFor(source: string, given: string | undefined): string | undefined {
	return given ?? (TAB_SEPARATED.includes(extensionOf(source)) ? '\t' : undefined);
}

/**
 * The format given, or told from the source's name. A refusal names the settings as the client
 * calls them (`names`); a client without a format setting (the API's campaigns) is not told to use one.
 */
export function formatOf(
	source: string,
	given: string | undefined,
	names: { source: string; format?: string },
): SourceFormat {
	const formatName = names.format ?? 'format';
	if (given) {
		if (!(SOURCE_FORMATS as readonly string[]).includes(given))
			throw new FieldError(`${formatName} must be one of ${SOURCE_FORMATS.join(', ')}; got "${given}"`, formatName);
		return given as SourceFormat;
	}
	const extension = extensionOf(source);
	if (extension === '.csv' || TAB_SEPARATED.includes(extension)) return 'csv';
	if (extension === '.json') return 'json';
	if (extension === '.ndjson' || extension === '.jsonl') return 'ndjson';
	throw new FieldError(
		`cannot tell the format of ${shownUrl(source)} from its name: ` +
			`use a .csv, .tsv, .txt, .json or .ndjson name${names.format ? `, or ${names.format}` : ''}`,
		names.format ?? names.source,
	);
}

/** A source URL the network policy refuses (net/outbound.ts): the caller names its field. */
class SourceNotAllowed extends SourceError {}

/** Reading any local path, as the operator's CLI may. */
export const CLI_ACCESS: SourceAccess = { origin: 'cli', label: '--source' };

/**
 * The raw bytes of the source; refuses a missing file, an unreachable URL and a binary stream.
 * `access`: which local files it may be (localFiles.ts); the CLI's reads any. A URL is read
 * through the guarded connection of `config`'s policy (net/outbound.ts), and errors show it as
 * origin and path only.
 */
async function openSource(
	source: string,
	timeoutMs = 30_000,
	progress?: SourceProgress,
	access: SourceAccess = CLI_ACCESS,
	config?: RunnerConfig,
): Promise<Readable> {
	let raw: Readable;
	if (isUrl(source)) {
		if (!config) throw new SourceError(`cannot read ${shownUrl(source)}: no network policy was given`);
		let opened;
		try {
			opened = await outboundFor(config).openFeed(source, timeoutMs);
		} catch (error) {
			const Refusal = isNotAllowed(error) ? SourceNotAllowed : SourceError;
			throw new Refusal(`cannot read ${shownUrl(source)}: ${(error as Error).message}`);
		}
		raw = opened.body;
		if (progress && opened.total !== undefined) progress.total = opened.total;
	} else if (access.origin === 'api') {
		try {
			const { handle, size } = await openLocalSource(source, access);
			if (progress) progress.total = size;
			raw = handle.createReadStream();
		} catch (error) {
			throw error instanceof LocalSourceError ? new SourceError(error.message) : error;
		}
	} else {
		try {
			const info = await stat(source);
			if (!info.isFile()) throw new SourceError(`${source} is not a file`);
			if (progress) progress.total = info.size;
		} catch (error) {
			if (error instanceof SourceError) throw error;
			throw new SourceError(
				`cannot read ${source}: ` +
					`${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
			);
		}
		raw = createReadStream(source);
	}
	return refuseBinary(raw, shownUrl(source), progress);
}

export { refuseBinary };

/** A NUL byte in the first 8 KiB means a binary file: refuse it before any parser sees it. */
function refuseBinary(raw: Readable, source: string, progress?: SourceProgress): Readable {
	const out = new PassThrough();
	let checked = 0;
	raw.on('data', (chunk: Buffer) => {
		if (progress) progress.read += chunk.length;
		if (checked < 8192) {
			const head = chunk.subarray(0, 8192 - checked);
			checked += head.length;
			if (head.includes(0)) {
				raw.destroy();
				out.destroy(new SourceError(`${source} is a binary file, not CSV, JSON or NDJSON text`));
				return;
			}
		}
		if (!out.write(chunk)) raw.pause();
	});
	out.on('drain', () => raw.resume());
	raw.on('end', () => out.end());
	raw.on('error', (error) => out.destroy(new SourceError(`reading ${source} failed: ${error.message}`)));
	// The raw source flows from now on, so a refusal can come before the reader attaches (a create
	// first asks Redis whether its number may hold a copy): the reader still gets the error when it
	// reads the destroyed stream; without a listener meanwhile it would be an uncaught error.
	out.on('error', () => undefined);
	return out;
}

/**
 * pipe() does not pass errors on: a refused or broken source
 * must end the next stage with its error, not leave it waiting.
 */
function feed<T extends Duplex>(from: Readable, into: T): T {
	from.on('error', (error) => into.destroy(error));
	return from.pipe(into);
}

/** Records of the source in order. A whole-source problem (parse error, I/O error) throws SourceError. */
export async function* readRecords(
	source: string,
	format: SourceFormat,
	progress?: SourceProgress,
	access?: SourceAccess,
	config?: RunnerConfig,
	csv: CsvOptions = {},
): AsyncGenerator<SourceRecord> {
	yield* parseRecords(await openSource(source, undefined, progress, access, config), format, shownUrl(source), {
		...csv,
		delimiter: csvDelimiterFor(source, csv.delimiter),
	});
}

/** How a CSV is read: its delimiter when the client gave one; otherwise it is told from the header line (csv.ts). */
export interface CsvOptions {
	delimiter?: string;
}

/** Records of a byte stream already open (an uploaded request body); `name` is what errors call it. */
export async function* parseRecords(
	raw: Readable,
	format: SourceFormat,
	name: string,
	csv: CsvOptions = {},
): AsyncGenerator<SourceRecord> {
	if (format === 'csv') yield* csvRecords(raw, name, csv.delimiter);
	else if (format === 'ndjson') yield* ndjsonRecords(raw, name);
	else yield* jsonArrayRecords(raw, name);
}

/** Rows given inline (a JSON array in an API request), numbered from 1. */
export async function* inlineRecords(rows: unknown[]): AsyncGenerator<SourceRecord> {
	for (const [i, value] of rows.entries()) yield recordOf(i + 1, value);
}

/*
 * Parser messages may quote the text they choke on (V8's JSON.parse: `Unexpected token 'r',
 * "root:x:0:0"... is not valid JSON`; csv-parse: `got "y" at line 2`), so none is passed on:
 * a rejection or a source error says where (line, column or element) and which rule, in words
 * of the runner's own, picked from the parser's fixed part (the start of a V8 message, csv-parse's
 * error code). An unknown message gives only the position.
 */
const JSON_RULES: ReadonlyArray<[RegExp, string]> = [
	[/^Unexpected end of JSON input/, 'it ends before its value does'],
	[/^Unterminated string/, 'a string is never closed'],
	[/^Bad control character/, 'a string holds a control character'],
	[/^Bad (escaped character|Unicode escape)/, 'a string holds an invalid escape'],
	[/^Expected (property name|double-quoted property name)/, 'an object key is not a double-quoted string'],
	[/^Expected ':'/, "an object key is not followed by ':'"],
	[/^Expected ',' or '\}'/, "a value in an object is not followed by ',' or '}'"],
	[/^Expected ',' or '\]'/, "an element of an array is not followed by ',' or ']'"],
	[/^Unexpected non-whitespace character after JSON/, 'more follows its value'],
	[/^(Exponent part|No number after minus|Unterminated fractional)/, 'a number is malformed'],
	[/^Unexpected token/, 'a character stands where JSON allows none'],
];

/** "is not JSON: <rule> (column N)" from a JSON.parse error, without a byte of the text. */
export function jsonSyntaxReason(error: unknown): string {
	const message = error instanceof Error ? error.message : '';
	const rule = JSON_RULES.find(([pattern]) => pattern.test(message))?.[1] ?? 'it breaks JSON syntax';
	// Anchored at the end: a message that quotes the text ends "is not valid JSON" instead.
	const position = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(message);
	return `is not JSON: ${rule}${position ? ` (column ${Number(position[1]) + 1})` : ''}`;
}

const CSV_RULES: Readonly<Record<string, string>> = {
	CSV_INVALID_CLOSING_QUOTE: 'a quoted cell goes on after its closing quote',
	CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'a quoted cell goes on after its closing quote',
	CSV_QUOTE_NOT_CLOSED: 'a quoted cell is never closed',
	CSV_MAX_RECORD_SIZE: `a row is larger than ${MAX_RECORD_BYTES / 1048576} MB`,
	CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: 'a row has the wrong number of cells',
};

/** Where csv-parse is in the source: the line it has read to, and the blank lines it skipped so far. */
interface CsvPosition {
	lines: number;
	empty_lines: number;
}

/**
 * csv-parse's error as its line and rule (its code names the rule; its message may quote a cell).
 * An unclosed quote is found only at the end of the source: its line is where its row starts, the
 * line after the last record parsed (`last`) and the blank lines skipped since.
 */
function csvSyntaxReason(error: unknown, last: CsvPosition): string {
	const { code, lines, empty_lines: emptyLines } = error as { code?: unknown; lines?: unknown; empty_lines?: unknown };
	const rule =
		(typeof code === 'string' && CSV_RULES[code]) ||
		(typeof code === 'string' && /^CSV_[A-Z_]+$/.test(code)
			? `it breaks a CSV rule (${code})`
			: 'it breaks CSV syntax');
	const line =
		code === 'CSV_QUOTE_NOT_CLOSED' && typeof emptyLines === 'number'
			? last.lines + 1 + emptyLines - last.empty_lines
			: lines;
	return `${typeof line === 'number' && line > 0 ? `at line ${line}: ` : ''}${rule}`;
}

/** stream-json's messages are fixed sentences; anything else (or one with other text) gives no detail. */
function jsonArrayReason(error: unknown): string {
	const message = error instanceof Error ? error.message : '';
	const fixed = /^Parser (?:cannot parse input: |has )((?:[a-z ]|'[\]}:,]')+)$/.exec(message);
	if (fixed) return fixed[1];
	if (message === 'Top-level object should be an array.') return 'it is not an array';
	return 'it breaks JSON syntax';
}

/**
 * The stream's bytes up to its first line break (at most MAX_RECORD_BYTES), and a stream that
 * gives them again followed by the rest: the header line is looked at before the parser is made.
 */
async function headLine(raw: Readable): Promise<{ head: string; stream: Readable }> {
	const chunks = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
	const taken: Buffer[] = [];
	let size = 0;
	while (size <= MAX_RECORD_BYTES && !taken.some((chunk) => chunk.includes(10))) {
		const next = await chunks.next();
		if (next.done) break;
		taken.push(next.value);
		size += next.value.length;
	}
	const head = Buffer.concat(taken);
	async function* again() {
		try {
			if (head.length > 0) yield head;
			for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
		} finally {
			// A reader that stops early (a row cap) ends the source too, not just this stream.
			await chunks.return?.();
		}
	}
	const end = head.indexOf(10);
	return {
		head: head.subarray(0, end === -1 ? head.length : end).toString('utf8'),
		stream: Readable.from(again(), { objectMode: false }),
	};
}

async function* csvRecords(raw: Readable, source: string, given?: string): AsyncGenerator<SourceRecord> {
	// A name (`semicolon`) as its character; core refused a delimiter it does not know before any row is read.
	let delimiter = given === undefined ? undefined : (csvDelimiterNamed(given) ?? given);
	if (delimiter === undefined) {
		let head;
		try {
			head = await headLine(raw);
		} catch (error) {
			throw error instanceof SourceError
				? error
				: new SourceError(`reading ${source} failed: ${(error as Error).message}`);
		}
		delimiter = detectCsvDelimiter(head.head);
		raw = head.stream;
	}
	// Columns are read by hand (not `columns: true`) so a row with the wrong number of cells is a
	// rejected row with its line, not a parse error that stops the whole file.
	// The last record parsed (read or not: a parse error drops those not yet read), for the line of an unclosed quote.
	const last: CsvPosition = { lines: 0, empty_lines: 0 };
	const noteRecord = <T>(entry: T, { lines, empty_lines }: CsvPosition): T => {
		Object.assign(last, { lines, empty_lines });
		return entry;
	};
	const parser = feed(
		raw,
		parseCsv({
			bom: true,
			delimiter,
			info: true,
			skip_empty_lines: true,
			relax_column_count: true,
			trim: false,
			max_record_size: MAX_RECORD_BYTES,
			on_record: noteRecord,
		}),
	);
	let header: string[] | undefined;
	let phoneColumn = -1;
	let lastByte = 10;
	raw.on('data', (chunk: Buffer) => (lastByte = chunk[chunk.length - 1] ?? lastByte));
	// A short row is held until the next one: if it is the last and the source stops without a
	// line break, the source was cut short inside it, which fails the whole read.
	let shortRow: SourceRecord | undefined;
	try {
		for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
			if (!header) {
				header = record.map((name) => name.trim());
				const twice = header.findIndex((name, i) => header?.indexOf(name) !== i);
				if (twice !== -1)
					throw new SourceError(
						`${source}: the header names one column twice ` +
							`(columns ${header.indexOf(header[twice]) + 1} and ${twice + 1})`,
					);
				phoneColumn = header.indexOf('phone');
				continue;
			}
			if (shortRow) yield shortRow;
			shortRow = undefined;
			if (record.length !== header.length) {
				// The phone is kept when its cell was read, so the report still says who the row was for.
				const phone = phoneColumn === -1 ? undefined : record[phoneColumn]?.trim() || undefined;
				shortRow = {
					line: info.lines,
					ok: false,
					reason: `has ${record.length} cells; the header has ${header.length}`,
					columns: header,
					...(phone === undefined ? {} : { phone }),
				};
				continue;
			}
			yield {
				line: info.lines,
				ok: true,
				fields: Object.fromEntries(header.map((name, i) => [name, record[i]])),
				columns: header,
			};
		}
		if (shortRow && lastByte !== 10 && lastByte !== 13)
			throw new SourceError(`${source} is cut short: it ends inside the row at line ${shortRow.line}`);
		if (shortRow) yield shortRow;
	} catch (error) {
		if (error instanceof SourceError) throw error;
		throw new SourceError(`${source} is not valid CSV ${csvSyntaxReason(error, last)}`);
	}
	if (!header) throw new SourceError(`${source} is empty`);
}

/** One NDJSON line as a record. */
function ndjsonRecord(line: number, text: string): SourceRecord {
	let value: unknown;
	try {
		// V8's JSON.parse does not recurse: a row nested however deep parses, and recordOf rejects it.
		value = JSON.parse(text);
	} catch (error) {
		return { line, ok: false, reason: jsonSyntaxReason(error) };
	}
	return recordOf(line, value);
}

/**
 * Lines split by hand, not by readline, so a line longer than MAX_RECORD_BYTES is skipped as it
 * streams by (never held whole), and a last line without a line break that is not JSON is told
 * apart from a bad row: the source was cut short inside it.
 */
async function* ndjsonRecords(raw: Readable, source: string): AsyncGenerator<SourceRecord> {
	let line = 1;
	let parts: Buffer[] = [];
	let size = 0;
	let oversized = false;
	const finish = (): SourceRecord | undefined => {
		const record = oversized
			? {
					line,
					ok: false as const,
					reason: `is ${(size / 1048576).toFixed(1)} MB; a record may be at most ${MAX_RECORD_BYTES / 1048576} MB`,
				}
			: size === 0
				? undefined
				: (() => {
						const text = Buffer.concat(parts, size).toString('utf8');
						return text.trim() === '' ? undefined : ndjsonRecord(line, text.endsWith('\r') ? text.slice(0, -1) : text);
					})();
		parts = [];
		size = 0;
		oversized = false;
		line++;
		return record;
	};
	try {
		for await (const chunk of raw as AsyncIterable<Buffer>) {
			let from = 0;
			for (let at = chunk.indexOf(10, from); at !== -1; at = chunk.indexOf(10, from)) {
				const piece = chunk.subarray(from, at);
				size += piece.length;
				if (size > MAX_RECORD_BYTES) oversized = true;
				if (!oversized) parts.push(piece);
				from = at + 1;
				const record = finish();
				if (record) yield record;
			}
			const rest = chunk.subarray(from);
			size += rest.length;
			if (!oversized && size > MAX_RECORD_BYTES) {
				oversized = true;
				parts = [];
			}
			if (!oversized && rest.length > 0) parts.push(rest);
		}
	} catch (error) {
		throw error instanceof SourceError
			? error
			: new SourceError(`reading ${source} failed at line ${line}: ${(error as Error).message}`);
	}
	const endsInsideRecord = size > 0 && !oversized;
	const last = finish();
	if (last && !last.ok && endsInsideRecord)
		throw new SourceError(`${source} is cut short: it ends inside line ${last.line}, which ${last.reason}`);
	if (last) yield last;
}

async function* jsonArrayRecords(raw: Readable, source: string): AsyncGenerator<SourceRecord> {
	const elements = feed(feed(raw, StreamJson.parser()), StreamArray.streamArray());
	let position = 0;
	try {
		for await (const { value } of elements as AsyncIterable<{ key: number; value: unknown }>) {
			position++;
			yield recordOf(position, value);
		}
	} catch (error) {
		if (error instanceof SourceError) throw error;
		throw new SourceError(
			`${source} is not a JSON array of objects: ` +
				`${position === 0 ? 'before its first element' : `after element ${position}`}, ${jsonArrayReason(error)}`,
		);
	}
}
