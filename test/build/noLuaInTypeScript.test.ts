/**
 * Redis scripts live in runner/src/lua as .lua files (redisScripts.ts loads them): no TypeScript
 * source of the runner, the sandbox or the packages holds Lua.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
