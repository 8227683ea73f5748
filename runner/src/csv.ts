/**
 * Every CSV the runner writes goes through csvRows: a spreadsheet opening it must never run a cell.
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
