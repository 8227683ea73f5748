/**
 * The runner's one home for CSV rules. Reading (source.ts parses every CSV that comes in: a CLI
 * file, a URL, an API upload, a reindex feed): the delimiter, given or told from the header line.
 * Writing: every CSV the runner writes goes through csvRows: a spreadsheet opening it must never run a cell.
 * A cell that starts with = + - @, a tab or a carriage return can be read as a formula
 * (`=HYPERLINK(...)`, `-2+3`, `@SUM(...)`), so it gets a leading `'` (OWASP's advice for CSV
 * injection), which spreadsheets show as text. One exception: a cell that is a plain number,
 * optionally signed (`+4930100200`, `-5`, `12.5`), is left as it is; a spreadsheet reads it as a
 * number, which runs nothing, and prefixing it would damage every valid phone written `+<digits>`.
 */
import { stringify } from 'csv-stringify/sync';

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

/** The cell as written: a leading `'` when a spreadsheet could take it for a formula. */
function spreadsheetSafe(value: string): string {
	return FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
}

/** Rows as CSV text, each string cell made spreadsheet-safe. */
export function csvRows(rows: unknown[][]): string {
	return stringify(rows, { cast: { string: spreadsheetSafe } });
}

/** The delimiters a CSV may use, by the names a client may give them. */
const DELIMITERS: Readonly<Record<string, string>> = {
	',': ',',
	comma: ',',
	';': ';',
	semicolon: ';',
	'\t': '\t',
	tab: '\t',
};

/**
 * A delimiter as given (`;`, `semicolon`, `tab`, ...) as its character, or undefined when it is none the runner reads.
 */
export function csvDelimiterNamed(given: string): string | undefined {
	return DELIMITERS[given.toLowerCase()];
}

/** How a delimiter reads in a message. */
export const delimiterName = (delimiter: string) =>
	delimiter === '\t' ? 'tab' : delimiter === ';' ? 'semicolon' : 'comma';

/**
 * The delimiter of a CSV told from its header line: whichever of comma, semicolon and tab occurs
 * most often outside double quotes. Spreadsheets write `;` in locales whose decimal mark is a
 * comma (Excel in German, French, ...), so a header `phone;name` must not read as one column.
 * None at all (a one-column file) or a tie: comma, the standard's.
 */
export function detectCsvDelimiter(headerLine: string): string {
	const counts = new Map<string, number>([
		[',', 0],
		[';', 0],
		['\t', 0],
	]);
	let quoted = false;
	for (const char of headerLine) {
		if (char === '"') quoted = !quoted;
		else if (!quoted && counts.has(char)) counts.set(char, (counts.get(char) ?? 0) + 1);
	}
	let best = ',';
	for (const [delimiter, count] of counts) if (count > (counts.get(best) ?? 0)) best = delimiter;
	return best;
}
