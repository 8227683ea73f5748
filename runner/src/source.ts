/**
 * Reading a source, a local file or an http(s) URL, as a stream of records with their line numbers,
 * whatever the format: CSV (csv-parse), a JSON array (stream-json), or NDJSON (lines split here). Memory
 * stays flat in the size of the source. Shared by every job kind that reads a feed.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { PassThrough, type Duplex, type Readable } from 'node:stream';

import { parse as parseCsv } from 'csv-parse';

import type { RunnerConfig } from './config';
import { isNotAllowed, outboundFor } from './net/outbound';
import { isHttpUrl, shownUrl } from './net/urls';

// stream-json 1.x is CommonJS; its typings describe the factory functions.
import StreamJson from 'stream-json';
import StreamArray from 'stream-json/streamers/StreamArray';

export type SourceFormat = 'csv' | 'json' | 'ndjson';
export const SOURCE_FORMATS: readonly SourceFormat[] = ['csv', 'json', 'ndjson'];

export class SourceError extends Error {}

/** One record of a source: its line (CSV: the file line, header = 1; NDJSON: the line; JSON array: the position, first = 1). */
export type SourceRecord =
	| { line: number; ok: true; fields: Record<string, unknown> }
	| { line: number; ok: false; reason: string };

/** Filled while a source is read: bytes so far, the size when known (file size, Content-Length). */
export interface SourceProgress {
	read: number;
	total?: number;
}

/** A record longer than this is rejected on its own (NDJSON: skipped without being held in memory). */
export const MAX_RECORD_BYTES = 1024 * 1024;

export const isUrl = isHttpUrl;

export function formatOf(source: string, given?: string): SourceFormat {
	if (given) {
		if (!(SOURCE_FORMATS as readonly string[]).includes(given)) throw new SourceError(`--format must be one of ${SOURCE_FORMATS.join(', ')}; got "${given}"`);
		return given as SourceFormat;
	}
	const path = isUrl(source) ? new URL(source).pathname : source;
	const extension = extname(path).toLowerCase();
	if (extension === '.csv') return 'csv';
	if (extension === '.json') return 'json';
	if (extension === '.ndjson' || extension === '.jsonl') return 'ndjson';
	throw new SourceError(`cannot tell the format of ${shownUrl(source)} from its name: use a .csv, .json or .ndjson name, or --format`);
}

/** A source URL the network policy refuses (net/outbound.ts): the caller names its field. */
export class SourceNotAllowed extends SourceError {}

/**
 * The raw bytes of the source; refuses a missing file, an unreachable URL and a binary stream.
 * A URL is read through the guarded connection of `config`'s policy (net/outbound.ts), and errors
 * show it as origin and path only.
 */
export async function openSource(source: string, timeoutMs = 30_000, progress?: SourceProgress, config?: RunnerConfig): Promise<Readable> {
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
	} else {
		try {
			const info = await stat(source);
			if (!info.isFile()) throw new SourceError(`${source} is not a file`);
			if (progress) progress.total = info.size;
		} catch (error) {
			if (error instanceof SourceError) throw error;
			throw new SourceError(`cannot read ${source}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
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
	return out;
}

/** pipe() does not pass errors on: a refused or broken source must end the next stage with its error, not leave it waiting. */
function feed<T extends Duplex>(from: Readable, into: T): T {
	from.on('error', (error) => into.destroy(error));
	return from.pipe(into);
}

/** Records of the source in order. A whole-source problem (parse error, I/O error) throws SourceError. */
export async function* readRecords(source: string, format: SourceFormat, progress?: SourceProgress, config?: RunnerConfig): AsyncGenerator<SourceRecord> {
	yield* parseRecords(await openSource(source, undefined, progress, config), format, shownUrl(source));
}

/** Records of a byte stream already open (an uploaded request body); `name` is what errors call it. */
export async function* parseRecords(raw: Readable, format: SourceFormat, name: string): AsyncGenerator<SourceRecord> {
	if (format === 'csv') yield* csvRecords(raw, name);
	else if (format === 'ndjson') yield* ndjsonRecords(raw, name);
	else yield* jsonArrayRecords(raw, name);
}

/** Rows given inline (a JSON array in an API request), numbered from 1. */
export async function* inlineRecords(rows: unknown[]): AsyncGenerator<SourceRecord> {
	for (const [i, value] of rows.entries()) {
		if (value === null || typeof value !== 'object' || Array.isArray(value)) yield { line: i + 1, ok: false, reason: 'is not a JSON object' };
		else yield { line: i + 1, ok: true, fields: value as Record<string, unknown> };
	}
}

async function* csvRecords(raw: Readable, source: string): AsyncGenerator<SourceRecord> {
	// Columns are read by hand (not `columns: true`) so a row with the wrong number of cells is a
	// rejected row with its line, not a parse error that stops the whole file.
	const parser = feed(raw, parseCsv({ bom: true, info: true, skip_empty_lines: true, relax_column_count: true, trim: false, max_record_size: MAX_RECORD_BYTES }));
	let header: string[] | undefined;
	let lastByte = 10;
	raw.on('data', (chunk: Buffer) => (lastByte = chunk[chunk.length - 1] ?? lastByte));
	// A short row is held until the next one: if it is the last and the source stops without a
	// line break, the source was cut short inside it, which fails the whole read.
	let shortRow: SourceRecord | undefined;
	try {
		for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
			if (!header) {
				header = record.map((name) => name.trim());
				const duplicate = header.find((name, i) => header?.indexOf(name) !== i);
				if (duplicate !== undefined) throw new SourceError(`${source}: the header names column "${duplicate}" twice`);
				continue;
			}
			if (shortRow) yield shortRow;
			shortRow = undefined;
			if (record.length !== header.length) {
				shortRow = { line: info.lines, ok: false, reason: `has ${record.length} cells; the header has ${header.length}` };
				continue;
			}
			yield { line: info.lines, ok: true, fields: Object.fromEntries(header.map((name, i) => [name, record[i]])) };
		}
		if (shortRow && lastByte !== 10 && lastByte !== 13) throw new SourceError(`${source} is cut short: it ends inside the row at line ${shortRow.line}`);
		if (shortRow) yield shortRow;
	} catch (error) {
		if (error instanceof SourceError) throw error;
		throw new SourceError(`${source} is not valid CSV: ${(error as Error).message}`);
	}
	if (!header) throw new SourceError(`${source} is empty`);
}

/** One NDJSON line as a record. */
function ndjsonRecord(line: number, text: string): SourceRecord {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (error) {
		return { line, ok: false, reason: `is not JSON: ${(error as Error).message}` };
	}
	if (value === null || typeof value !== 'object' || Array.isArray(value)) return { line, ok: false, reason: 'is not a JSON object' };
	return { line, ok: true, fields: value as Record<string, unknown> };
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
			? { line, ok: false as const, reason: `is ${(size / 1048576).toFixed(1)} MB; a record may be at most ${MAX_RECORD_BYTES / 1048576} MB` }
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
		throw error instanceof SourceError ? error : new SourceError(`reading ${source} failed at line ${line}: ${(error as Error).message}`);
	}
	const endsInsideRecord = size > 0 && !oversized;
	const last = finish();
	if (last && !last.ok && endsInsideRecord) throw new SourceError(`${source} is cut short: it ends inside line ${last.line}, which ${last.reason}`);
	if (last) yield last;
}

async function* jsonArrayRecords(raw: Readable, source: string): AsyncGenerator<SourceRecord> {
	const elements = feed(feed(raw, StreamJson.parser()), StreamArray.streamArray());
	let position = 0;
	try {
		for await (const { value } of elements as AsyncIterable<{ key: number; value: unknown }>) {
			position++;
			if (value === null || typeof value !== 'object' || Array.isArray(value)) yield { line: position, ok: false, reason: 'is not a JSON object' };
			else yield { line: position, ok: true, fields: value as Record<string, unknown> };
		}
	} catch (error) {
		if (error instanceof SourceError) throw error;
		throw new SourceError(`${source} is not a JSON array of objects: ${(error as Error).message}`);
	}
}
