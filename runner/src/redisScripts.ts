/**
 * The runner's Redis scripts: one `.lua` file per script under `lua/`, named `<name>-<number of
 * keys>.lua`, with shared parts under `lua/includes/` pulled in by a `--- @include "<path>"` line
 * (a path relative to the including file, without `.lua`). The same files serve the sources (tsx,
 * jest) and the bundle, which ships them as dist/lua beside dist/main.js: `__dirname/lua` is both.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

import type { RedisConnection } from './redis';

export const SCRIPTS_DIR = join(__dirname, 'lua');

const INCLUDE = /^---[ \t]*@include[ \t]+"([^"]+)"[ \t]*$/gm;
const SCRIPT_FILE = /^([A-Za-z][A-Za-z0-9]*)-(\d+)\.lua$/;

export interface ScriptFile {
	name: string;
	numberOfKeys: number;
	/** The file, from SCRIPTS_DIR. */
	path: string;
	/** The script as Redis gets it: its includes put in place. */
	lua: string;
}

/**
 * The file's text with each include replaced by the included file's (itself resolved); a file
 * included a second time in one script is left out, as its functions are defined already.
 */
export function resolveIncludes(file: string, seen = new Set<string>(), stack: string[] = []): string {
	if (stack.includes(file)) {
		const chain = [...stack, file].map((f) => relative(SCRIPTS_DIR, f)).join(' includes ');
		throw new Error(`${chain}: an include cycle`);
	}
	seen.add(file);
	return readFileSync(file, 'utf8').replace(INCLUDE, (_line, reference: string) => {
		const included = resolve(dirname(file), `${reference}.lua`);
		if (seen.has(included)) return '';
		return resolveIncludes(included, seen, [...stack, file]);
	});
}

function scriptFiles(folder: string): string[] {
	return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
		if (entry.isDirectory()) return entry.name === 'includes' ? [] : scriptFiles(join(folder, entry.name));
		return entry.name.endsWith('.lua') ? [join(folder, entry.name)] : [];
	});
}

let catalogue: Map<string, ScriptFile> | undefined;

/** Every script under SCRIPTS_DIR by name, read once per process. */
export function allScripts(): Map<string, ScriptFile> {
	if (catalogue) return catalogue;
	const found = new Map<string, ScriptFile>();
	for (const file of scriptFiles(SCRIPTS_DIR)) {
		const named = SCRIPT_FILE.exec(file.slice(dirname(file).length + 1));
		if (!named) throw new Error(`${relative(SCRIPTS_DIR, file)}: a script's file is named <name>-<number of keys>.lua`);
		if (found.has(named[1])) throw new Error(`two scripts are named ${named[1]}`);
		const path = relative(SCRIPTS_DIR, file);
		found.set(named[1], { name: named[1], numberOfKeys: Number(named[2]), path, lua: resolveIncludes(file) });
	}
	catalogue = found;
	return found;
}

type Script = (keys: string[], args: Array<string | number>) => Promise<unknown>;

/**
 * The script `name` as a function of (keys, args). ioredis defines it once per connection (as
 * `convo<Name>`) and then runs it by its SHA, loading it again after a Redis restart.
 */
export function redisScript(connection: RedisConnection, name: string): Script {
	const script = allScripts().get(name);
	if (!script) throw new Error(`no Redis script ${name} in ${SCRIPTS_DIR}`);
	const command = `convo${name[0].toUpperCase()}${name.slice(1)}`;
	const { lua, numberOfKeys } = script;
	if (!(command in connection)) connection.defineCommand(command, { lua, numberOfKeys });
	type Command = (...a: Array<string | number>) => Promise<unknown>;
	// Looked up when called, as ioredis defines it: a stand-in connection that defines nothing fails only if used.
	return (keys, args) => {
		if (keys.length !== numberOfKeys) {
			return Promise.reject(new Error(`${script.path} takes ${numberOfKeys} keys, not ${keys.length}`));
		}
		return (connection as unknown as Record<string, Command>)[command](...keys, ...args);
	};
}
