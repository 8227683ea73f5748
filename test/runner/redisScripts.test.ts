/**
 * Every Redis script under runner/src/lua: loadable by a real redis-server (SCRIPT LOAD compiles
 * it, includes resolved), headed by what it takes and answers, and named with the keys it uses.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { allScripts, SCRIPTS_DIR } from '../../runner/src/redisScripts';
import { useRedisConnection } from './support';

const connection = useRedisConnection();

const scripts = [...allScripts().values()];

/** The script without its comments: what it runs, for counting what it reads. */
const code = (lua: string) => lua.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--[^\n]*/g, '');
const used = (lua: string, table: 'KEYS' | 'ARGV') => {
	const indexes = [...code(lua).matchAll(new RegExp(`${table}\\[(\\d+)\\]`, 'g'))].map((match) => Number(match[1]));
	return [...new Set(indexes)].sort((a, b) => a - b);
};
/** The opening comment of the script's own file. */
const header = (path: string) => /^--\[\[([\s\S]*?)\]\]/.exec(readFileSync(join(SCRIPTS_DIR, path), 'utf8'))?.[1] ?? '';

test('the loader finds every script, the lock helper among them', () => {
	expect(scripts.length).toBeGreaterThanOrEqual(45);
	const names = scripts.map((script) => script.name);
	const some = ['takeLock', 'renewLock', 'releaseLock', 'settle', 'start', 'commitCampaign'];
	expect(names).toEqual(expect.arrayContaining(some));
	for (const script of scripts) expect(script.lua).not.toMatch(/@include/);
});

test.each(scripts.map((script) => [script.path, script] as const))('%s loads into Redis', async (_path, script) => {
	const sha = await connection.redis.script('LOAD', script.lua);
	expect(sha).toMatch(/^[0-9a-f]{40}$/);
});

const named = 'names its keys, arguments and answer, and uses the keys its name counts';
test.each(scripts.map((script) => [script.path, script] as const))(`%s ${named}`, (path, script) => {
	const head = header(path);
	const keys = used(script.lua, 'KEYS');
	expect(keys).toEqual(Array.from({ length: script.numberOfKeys }, (_, i) => i + 1));
	for (const key of keys) expect(head).toMatch(new RegExp(`^\\s*KEYS\\[${key}\\] \\S`, 'm'));
	for (const arg of used(script.lua, 'ARGV')) expect(head).toMatch(new RegExp(`^\\s*ARGV\\[${arg}\\] \\S`, 'm'));
	expect(head).toMatch(/^\s*Returns \S/m);
});
