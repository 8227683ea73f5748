/**
 * Mutants of the runner's Redis scripts, one .lua file at a time (runner/src/lua: a script, or an
 * include shared by several, mutated where it lives). Within the file's code (strings and comments,
 * the header and `--- @include` lines among them, left alone):
 * - every comparison flipped to its negation (`==` / `~=`, `<` / `>=`, `>` / `<=`);
 * - every guard `if ... then return ... end` written on one line dropped;
 * - every write dropped: a statement that is a `redis.call` of a writing command, or a call of a
 *   function that writes (the `local function`s of every script and include, and `emit`).
 * A mutant's Lua must still compile (scripts/mutation-check.ts asks a throwaway Redis, for every
 * script that includes the file), so a test that fails only because the script does not load kills
 * nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import type { Mutant } from './mutant';

/** Redis commands that change data: dropping one such call is a mutant. */
const WRITES = new Set([
	'SET',
	'DEL',
	'UNLINK',
	'EXPIRE',
	'PEXPIRE',
	'PEXPIREAT',
	'EXPIREAT',
	'PERSIST',
	'INCR',
	'INCRBY',
	'DECR',
	'DECRBY',
	'HSET',
	'HSETNX',
	'HMSET',
	'HDEL',
	'HINCRBY',
	'HINCRBYFLOAT',
	'SADD',
	'SREM',
	'ZADD',
	'ZREM',
	'ZREMRANGEBYSCORE',
	'ZREMRANGEBYRANK',
	'ZINCRBY',
	'LPUSH',
	'RPUSH',
	'LPOP',
	'RPOP',
	'LTRIM',
	'LREM',
	'XADD',
	'XTRIM',
	'RENAME',
]);

/** Functions that write wherever they are defined (includes/emit.lua's `emit` writes the outbox). */
const WRITING_FUNCTIONS = new Set(['emit']);

const NEGATION: Record<string, string> = { '==': '~=', '~=': '==', '<': '>=', '>=': '<', '>': '<=', '<=': '>' };

const INCLUDE = /^---[ \t]*@include[ \t]+"([^"]+)"/gm;

/** Every .lua file under `dir`, includes too, as absolute paths. */
export function luaFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return luaFiles(path);
		return entry.name.endsWith('.lua') ? [path] : [];
	});
}

/** The files a .lua file includes, directly or through another include. */
export function includedBy(file: string, seen = new Set<string>()): Set<string> {
	for (const match of readFileSync(file, 'utf8').matchAll(INCLUDE)) {
		const included = resolve(dirname(file), `${match[1]}.lua`);
		if (seen.has(included)) continue;
		seen.add(included);
		includedBy(included, seen);
	}
	return seen;
}

/**
 * The file's text with every string's content and every comment (block comments, the header among
 * them, too) blanked to spaces, positions kept: what is left is code, where operators and calls can
 * be searched safely.
 */
function codeOnly(text: string): string {
	const chars = text.split('');
	const blank = (from: number, to: number) => {
		for (let i = from; i < to; i++) if (chars[i] !== '\n') chars[i] = ' ';
	};
	for (let i = 0; i < chars.length; i++) {
		if (chars[i] === '-' && chars[i + 1] === '-') {
			const block = text.startsWith('[[', i + 2) ? text.indexOf(']]', i + 4) : -1;
			const eol = chars.indexOf('\n', i);
			const to = block !== -1 ? block + 2 : eol === -1 ? chars.length : eol;
			blank(i, to);
			i = to - 1;
		} else if (chars[i] === "'" || chars[i] === '"') {
			const quote = chars[i];
			let j = i + 1;
			while (j < chars.length && chars[j] !== quote) j += chars[j] === '\\' ? 2 : 1;
			blank(i + 1, j);
			i = j;
		}
	}
	return chars.join('');
}

/** The index just after the parenthesis that closes the one at `open`. */
function closingParen(code: string, open: number): number {
	let depth = 0;
	for (let i = open; i < code.length; i++) {
		if (code[i] === '(') depth++;
		else if (code[i] === ')' && --depth === 0) return i + 1;
	}
	return -1;
}

/** Whether a call starting at `at` is a statement: at the start of a line, or after `;`, `then`, `else`, `do`. */
function isStatement(code: string, at: number): boolean {
	const before = code.slice(0, at).replace(/[ \t]+$/, '');
	return before === '' || /(\n|;|\bthen|\belse|\bdo)$/.test(before);
}

function lineOf(text: string, offset: number): number {
	return text.slice(0, offset).split('\n').length;
}

/** The block that starts at the keyword at `from` (`function`, `if`, `do`), to just after its `end`. */
function blockEnd(code: string, from: number): number {
	let depth = 0;
	for (const match of code.slice(from).matchAll(/\b(function|if|do|repeat|end|until)\b/g)) {
		depth += match[1] === 'end' || match[1] === 'until' ? -1 : 1;
		if (depth === 0) return from + (match.index ?? 0) + match[1].length;
	}
	return code.length;
}

/** The commands a piece of Lua calls with redis.call, read from its raw text. */
function commandsIn(raw: string): string[] {
	return [...raw.matchAll(/redis\.call\(\s*'([A-Za-z]+)'/g)].map((match) => match[1].toUpperCase());
}

/**
 * The `local function`s of the scripts and includes that write: they call a writing command,
 * `emit`, or another such function. Shared by every file (claim-5.lua calls ledgerRecords' `write`).
 */
export function writingFunctionsOf(texts: string[]): Set<string> {
	const bodies = new Map<string, string>();
	for (const raw of texts) {
		const code = codeOnly(raw);
		for (const match of code.matchAll(/\blocal\s+function\s+([A-Za-z_]\w*)/g)) {
			const from = (match.index ?? 0) + match[0].indexOf('function');
			bodies.set(match[1], raw.slice(from, blockEnd(code, from)));
		}
	}
	const writing = new Set(WRITING_FUNCTIONS);
	for (let grew = true; grew; ) {
		grew = false;
		for (const [name, body] of bodies) {
			if (writing.has(name)) continue;
			const callsWriter = [...writing].some((writer) => new RegExp(`\\b${writer}\\s*\\(`).test(body));
			if (commandsIn(body).some((command) => WRITES.has(command)) || callsWriter) {
				writing.add(name);
				grew = true;
			}
		}
	}
	return writing;
}

/** The mutants of one .lua file's text; `label` names the file in each mutant's name. */
export function luaMutants(raw: string, label: string, writingFunctions: ReadonlySet<string>): Mutant[] {
	const code = codeOnly(raw);
	const mutants: Mutant[] = [];
	const where = (offset: number) => `${label} line ${lineOf(raw, offset)}`;
	const shown = (from: number, to: number) => raw.slice(from, to).replace(/\s+/g, ' ').trim();

	// Guards written on one line: `if <condition> then return <value> end`.
	for (const match of code.matchAll(/\bif\b[^\n]*?\bthen\s+return\b[^\n]*?\bend\b/g)) {
		const from = match.index ?? 0;
		const to = from + match[0].length;
		if (/\b(if|function)\b/.test(match[0].slice(2))) continue;
		mutants.push({
			name: `${where(from)}: drop the guard \`${shown(from, to)}\``,
			start: from,
			end: to,
			replacement: '',
		});
	}

	// Comparisons, each flipped.
	for (const match of code.matchAll(/~=|==|>=|<=|<|>/g)) {
		const from = match.index ?? 0;
		const lineStart = raw.lastIndexOf('\n', from) + 1;
		const lineEnd = raw.indexOf('\n', from);
		const flipped = NEGATION[match[0]];
		const line = shown(lineStart, lineEnd === -1 ? raw.length : lineEnd);
		mutants.push({
			name: `${where(from)}: ${match[0]} -> ${flipped} in \`${line}\``,
			start: from,
			end: from + match[0].length,
			replacement: flipped,
		});
	}

	// Writes, each dropped where it is a statement: redis.call of a writing command, or a call of a function that writes.
	for (const match of code.matchAll(/(redis\.call|\b[A-Za-z_]\w*)\s*\(/g)) {
		const from = match.index ?? 0;
		const callee = match[1];
		if (!isStatement(code, from)) continue;
		const open = from + match[0].length - 1;
		const close = closingParen(code, open);
		if (close === -1) continue;
		const writes =
			callee === 'redis.call'
				? commandsIn(raw.slice(from, close))
						.slice(0, 1)
						.some((command) => WRITES.has(command))
				: writingFunctions.has(callee);
		if (!writes) continue;
		// Lua 5.1 has no empty statement: a `;` that followed the call goes with it.
		const after = /^[ \t]*;/.exec(code.slice(close))?.[0].length ?? 0;
		mutants.push({
			name: `${where(from)}: drop \`${shown(from, close)}\``,
			start: from,
			end: close + after,
			replacement: '',
		});
	}
	return mutants.sort((a, b) => a.start - b.start);
}
