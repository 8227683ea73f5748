/**
 * Mutants of the Lua scripts a runner module holds in template literals (`const CLAIM = \`...\``),
 * found by parsing the TypeScript source, never by line numbers: a script is a top-level constant
 * whose template text calls `redis.call(`. Within each script's own text (its `${...}` parts are
 * other constants, mutated where they are declared):
 * - every comparison flipped to its negation (`==` / `~=`, `<` / `>=`, `>` / `<=`);
 * - every guard `if ... then return ... end` written on one line dropped;
 * - every write dropped: a statement that is a `redis.call` of a writing command, or a call of a
 *   function that writes (the script's own `local function`s and `emit`).
 * A mutant's Lua must still compile (scripts/mutation-check.ts asks a throwaway Redis), so a test
 * that fails only because the script does not load kills nothing.
 */
import ts from 'typescript';

import type { Mutant } from './mutant';

/** Redis commands that change data: dropping one such call is a mutant. */
const WRITES = new Set([
	'SET', 'DEL', 'UNLINK', 'EXPIRE', 'PEXPIRE', 'PEXPIREAT', 'EXPIREAT', 'PERSIST', 'INCR', 'INCRBY', 'DECR', 'DECRBY',
	'HSET', 'HSETNX', 'HMSET', 'HDEL', 'HINCRBY', 'HINCRBYFLOAT', 'SADD', 'SREM', 'ZADD', 'ZREM', 'ZREMRANGEBYSCORE', 'ZREMRANGEBYRANK',
	'ZINCRBY', 'LPUSH', 'RPUSH', 'LPOP', 'RPOP', 'LTRIM', 'LREM', 'XADD', 'XTRIM', 'RENAME',
]);

/** Functions defined outside the mutated text that write (LUA_EMIT's `emit` writes the outbox). */
const WRITING_FUNCTIONS = new Set(['emit']);

const NEGATION: Record<string, string> = { '==': '~=', '~=': '==', '<': '>=', '>=': '<', '>': '<=', '<=': '>' };

export interface LuaScript {
	/** The constant's name: CLAIM, SETTLE, LUA_HELPERS. */
	name: string;
	/** Source positions of the template's text, between the backticks. */
	start: number;
	end: number;
	/** Positions of its `${...}` parts, with the text that stands for each when the Lua is compiled alone. */
	substitutions: Array<{ start: number; end: number; standIn: string }>;
}

/** The top-level template constants of a module that are Lua scripts (or shared parts of them). */
export function luaScriptsOf(source: ts.SourceFile): LuaScript[] {
	const scripts: LuaScript[] = [];
	for (const statement of source.statements) {
		if (!ts.isVariableStatement(statement)) continue;
		for (const declaration of statement.declarationList.declarations) {
			const template = declaration.initializer;
			if (!ts.isIdentifier(declaration.name) || !template) continue;
			if (!ts.isTemplateExpression(template) && !ts.isNoSubstitutionTemplateLiteral(template)) continue;
			const start = template.getStart(source) + 1;
			const end = template.getEnd() - 1;
			if (!source.text.slice(start, end).includes('redis.call(')) continue;
			const substitutions = ts.isTemplateExpression(template)
				? template.templateSpans.map((span) => {
						// From the `${` before the expression to the `}` after it.
						const from = source.text.lastIndexOf('${', span.expression.getStart(source));
						const to = source.text.indexOf('}', span.expression.getEnd()) + 1;
						const lineBefore = source.text.slice(Math.max(start, source.text.lastIndexOf('\n', from) + 1), from);
						// A part alone on its line is a block of Lua (shared functions); inside a line, a value.
						return { start: from, end: to, standIn: lineBefore.trim() === '' ? '' : '0' };
					})
				: [];
			scripts.push({ name: declaration.name.text, start, end, substitutions });
		}
	}
	return scripts;
}

/**
 * The script's text with every string's content, every comment and every `${...}` part blanked to
 * spaces, positions kept: what is left is code, where operators and calls can be searched safely.
 */
function codeOnly(text: string, script: LuaScript): string {
	const chars = text.slice(script.start, script.end).split('');
	const blank = (from: number, to: number) => {
		for (let i = from; i < to; i++) if (chars[i] !== '\n') chars[i] = ' ';
	};
	for (const part of script.substitutions) blank(part.start - script.start, part.end - script.start);
	for (let i = 0; i < chars.length; i++) {
		if (chars[i] === '-' && chars[i + 1] === '-') {
			const eol = chars.indexOf('\n', i);
			blank(i, eol === -1 ? chars.length : eol);
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

function lineOf(text: string, script: LuaScript, offset: number): number {
	return text.slice(script.start, script.start + offset).split('\n').length;
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
 * The `local function`s of a module's scripts that write: they call a writing command, `emit`, or
 * another such function. Shared by every script of the module (CLAIM calls LUA_HELPERS' `write`).
 */
export function writingFunctionsOf(text: string, scripts: LuaScript[]): Set<string> {
	const bodies = new Map<string, string>();
	for (const script of scripts) {
		const code = codeOnly(text, script);
		const raw = text.slice(script.start, script.end);
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

export function luaMutants(text: string, script: LuaScript, writingFunctions: ReadonlySet<string>): Mutant[] {
	const code = codeOnly(text, script);
	const raw = text.slice(script.start, script.end);
	const mutants: Mutant[] = [];
	const at = (offset: number) => script.start + offset;
	const where = (offset: number) => `${script.name} line ${lineOf(text, script, offset)}`;
	const shown = (from: number, to: number) => raw.slice(from, to).replace(/\s+/g, ' ').trim();

	// Guards written on one line: `if <condition> then return <value> end`.
	for (const match of code.matchAll(/\bif\b[^\n]*?\bthen\s+return\b[^\n]*?\bend\b/g)) {
		const from = match.index ?? 0;
		const to = from + match[0].length;
		if (/\b(if|function)\b/.test(match[0].slice(2))) continue;
		mutants.push({ name: `${where(from)}: drop the guard \`${shown(from, to)}\``, start: at(from), end: at(to), replacement: '' });
	}

	// Comparisons, each flipped.
	for (const match of code.matchAll(/~=|==|>=|<=|<|>/g)) {
		const from = match.index ?? 0;
		const lineStart = raw.lastIndexOf('\n', from) + 1;
		const lineEnd = raw.indexOf('\n', from);
		const flipped = NEGATION[match[0]];
		mutants.push({
			name: `${where(from)}: ${match[0]} -> ${flipped} in \`${shown(lineStart, lineEnd === -1 ? raw.length : lineEnd)}\``,
			start: at(from),
			end: at(from + match[0].length),
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
		const writes = callee === 'redis.call' ? commandsIn(raw.slice(from, close)).slice(0, 1).some((command) => WRITES.has(command)) : writingFunctions.has(callee);
		if (!writes) continue;
		// Lua 5.1 has no empty statement: a `;` that followed the call goes with it.
		const after = /^[ \t]*;/.exec(code.slice(close))?.[0].length ?? 0;
		mutants.push({ name: `${where(from)}: drop \`${shown(from, close)}\``, start: at(from), end: at(close + after), replacement: '' });
	}
	return mutants.sort((a, b) => a.start - b.start);
}

/** The script as Redis would compile it on its own: mutated text, each `${...}` part replaced by its stand-in. */
export function standAloneLua(text: string, script: LuaScript): string {
	let lua = '';
	let from = script.start;
	for (const part of script.substitutions) {
		lua += text.slice(from, part.start) + part.standIn;
		from = part.end;
	}
	return lua + text.slice(from, script.end);
}

/** The script as it stands in the mutated text (positions after the change move by its length). */
export function scriptAfter(script: LuaScript, mutant: Mutant): LuaScript {
	const shift = mutant.replacement.length - (mutant.end - mutant.start);
	const moved = (position: number) => (position >= mutant.end ? position + shift : position);
	// A `${...}` part inside the changed text went with it.
	const kept = script.substitutions.filter((part) => part.end <= mutant.start || part.start >= mutant.end);
	return { ...script, end: moved(script.end), substitutions: kept.map((part) => ({ ...part, start: moved(part.start), end: moved(part.end) })) };
}
