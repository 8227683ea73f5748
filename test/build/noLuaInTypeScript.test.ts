/**
 * Redis scripts live in runner/src/lua as .lua files (redisScripts.ts loads them): no TypeScript
 * source of the runner, the sandbox or the packages holds Lua. The scripts' lines fit 120 columns,
 * as the TypeScript's do (ESLint's max-len holds those; it reads no Lua).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const LUA_CALL = /\bredis\.p?call\s*\(/;

function typeScriptFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return ['node_modules', 'dist'].includes(entry.name) ? [] : typeScriptFiles(path);
		return entry.name.endsWith('.ts') ? [path] : [];
	});
}

function luaFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return luaFiles(path);
		return entry.name.endsWith('.lua') ? [path] : [];
	});
}

/** The lines of the .lua files under `dir` wider than 120 columns (a tab counts 2, as for max-len), as `path:line`. */
function longLuaLines(dir: string): string[] {
	return luaFiles(dir).flatMap((file) =>
		readFileSync(file, 'utf8')
			.split('\n')
			.flatMap((line, index) =>
				[...line.replace(/\t/g, '  ')].length > 120 ? [`${relative(dir, file)}:${index + 1}`] : [],
			),
	);
}

/** The files under `dirs` with Lua in them, as paths from `root`. */
function filesWithLua(root: string, dirs: string[]): string[] {
	const files = dirs.flatMap((dir) => typeScriptFiles(join(root, dir)));
	return files.filter((file) => LUA_CALL.test(readFileSync(file, 'utf8'))).map((file) => relative(root, file));
}

test('no TypeScript source under runner/src, sandbox/src or packages holds a Redis script', () => {
	expect(filesWithLua(ROOT, ['runner/src', 'sandbox/src', 'packages'])).toEqual([]);
});

test('a script planted in a TypeScript string is found', () => {
	const root = mkdtempSync(join(tmpdir(), 'no-lua-'));
	try {
		writeFileSync(join(root, 'clean.ts'), "export const key = 'redis:call';\n");
		const planted = "export const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end`";
		writeFileSync(join(root, 'planted.ts'), `${planted};\n`);
		expect(filesWithLua(root, ['.'])).toEqual(['planted.ts']);
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
});

test('every line of the Redis scripts fits 120 columns, comments included', () => {
	expect(longLuaLines(join(ROOT, 'runner/src/lua'))).toEqual([]);
});

test('a 130-column line planted in a script, or in a comment of an include, is found', () => {
	const root = mkdtempSync(join(tmpdir(), 'lua-lines-'));
	try {
		mkdirSync(join(root, 'includes'));
		const fits = `return redis.call('GET', KEYS[1]) -- ${'x'.repeat(80)}`;
		writeFileSync(join(root, 'fits-1.lua'), `${fits}\n\t${'y'.repeat(118)}\n`);
		const code = `return redis.call('GET', '${'k'.repeat(102)}')`;
		writeFileSync(join(root, 'planted-1.lua'), `local a = 1\n${code}\n`);
		writeFileSync(join(root, 'includes', 'planted.lua'), `-- ${'c'.repeat(127)}\n`);
		expect(code).toHaveLength(130);
		expect(longLuaLines(root).sort()).toEqual(['includes/planted.lua:1', 'planted-1.lua:2']);
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
});
