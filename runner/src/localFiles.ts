/**
 * Which local files a source may be. The CLI is the operator's own tool: it reads any path its
 * process can. The control API (and what it schedules) reads only files inside the directory the
 * operator names in RUNNER_SOURCE_DIR, none when it is unset. Checked on the real path (links and
 * `..` resolved) when a run is created, and again on the file actually opened, since a schedule
 * runs later and a link can change in between. A path outside gets one answer, the same whether
 * it exists or not; only inside the directory may an answer say that a file is missing.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** Who named the source: the operator's CLI, or a caller of the control API. */
export type SourceOrigin = 'cli' | 'api';

export interface SourceAccess {
	origin: SourceOrigin;
	/** RUNNER_SOURCE_DIR of the process that checks or opens the file. */
	sourceDir?: string;
	/** How errors name the setting: `--source`, `source`. */
	label: string;
}

/** A source that cannot be used as given; `message` names the setting and the rule, never the file's bytes. */
export class LocalSourceError extends Error {}

/**
 * The one answer for a path the API may not read (outside the
 * directory, or no directory): it never depends on the path.
 */
export function outsideMessage(access: SourceAccess): string {
	return access.sourceDir
		? `${access.label} must be an http(s) URL or the path of a file inside the runner's source ` +
				'directory (RUNNER_SOURCE_DIR)'
		: `${access.label} must be an http(s) URL: this runner reads no local file for API callers ` +
				'(its operator may name a directory for them with RUNNER_SOURCE_DIR)';
}

const isInside = (dir: string, path: string) => {
	const rest = relative(dir, path);
	return rest !== '' && !rest.startsWith(`..${sep}`) && rest !== '..' && !isAbsolute(rest);
};

async function realDir(access: SourceAccess): Promise<string> {
	if (!access.sourceDir) throw new LocalSourceError(outsideMessage(access));
	try {
		return await realpath(access.sourceDir);
	} catch {
		// The operator's setting is wrong; that says nothing about the path asked for.
		throw new LocalSourceError(
			`${access.label} cannot be read: the runner's source directory (RUNNER_SOURCE_DIR) does not exist`,
		);
	}
}

/**
 * Why a path that cannot be resolved cannot be read: "missing" only when the deepest part of it
 * that exists is inside the directory and is not a link (a dangling link may point anywhere).
 */
async function unresolvable(
	dir: string,
	path: string,
	code: string | undefined,
	given: string,
	access: SourceAccess,
): Promise<LocalSourceError> {
	let existing = path;
	let child: string | undefined;
	for (;;) {
		try {
			const real = await realpath(existing);
			if (!isInside(dir, real) && real !== dir) return new LocalSourceError(outsideMessage(access));
			break;
		} catch {
			child = existing;
			existing = dirname(existing);
		}
	}
	if (child) {
		const info = await lstat(child).catch(() => undefined);
		if (info?.isSymbolicLink()) return new LocalSourceError(outsideMessage(access));
	}
	if (code === 'ENOENT' || code === 'ENOTDIR')
		return new LocalSourceError(`${access.label} ${given}: no such file in the runner's source directory`);
	return new LocalSourceError(`${access.label} ${given} cannot be read (${code ?? 'error'})`);
}

/**
 * The absolute path a run keeps for a local source, checked. The CLI's is its path from the
 * working directory, which must be a file. The API's is inside the source directory (a relative
 * path is taken from it) and its real path is too.
 */
export async function checkLocalSource(given: string, access: SourceAccess): Promise<string> {
	if (access.origin === 'cli') {
		const path = resolve(given);
		let info: Stats;
		try {
			info = await stat(path);
		} catch {
			throw new LocalSourceError(`${access.label} ${path}: no such file`);
		}
		if (!info.isFile()) throw new LocalSourceError(`${access.label} ${path} is not a file`);
		return path;
	}
	const dir = await realDir(access);
	// Named from the directory as configured or as it really is (the setting may itself pass through a link).
	const path = resolve(access.sourceDir as string, given);
	if (!isInside(resolve(access.sourceDir as string), path) && !isInside(dir, path))
		throw new LocalSourceError(outsideMessage(access));
	let real: string;
	try {
		real = await realpath(path);
	} catch (error) {
		throw await unresolvable(dir, path, (error as NodeJS.ErrnoException).code, given, access);
	}
	if (!isInside(dir, real)) throw new LocalSourceError(outsideMessage(access));
	const info = await stat(real).catch(() => undefined);
	if (!info?.isFile()) throw new LocalSourceError(`${access.label} ${given} is not a file`);
	return path;
}

/**
 * Where an open file really is: the kernel's name for it (Linux),
 * else its real path when that path still holds the same file.
 */
async function realPathOf(handle: FileHandle, checked: string, info: Stats): Promise<string | undefined> {
	const link = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
	if (link !== undefined) return link;
	const real = await realpath(checked).catch(() => undefined);
	const now = real ? await stat(real).catch(() => undefined) : undefined;
	return now && now.dev === info.dev && now.ino === info.ino ? real : undefined;
}

/**
 * Opens a local source for reading, checked again on the file opened: for the API, the opened
 * file's own real path must be inside the directory, whatever links changed since the run was
 * created. O_NONBLOCK: a FIFO put in its place does not hang the open (it is then not a file).
 */
export async function openLocalSource(
	given: string,
	access: SourceAccess,
): Promise<{ handle: FileHandle; size: number }> {
	const path = await checkLocalSource(given, access);
	const dir = access.origin === 'api' ? await realDir(access) : undefined;
	let handle: FileHandle;
	try {
		handle = await open(
			dir ? await realpath(path) : path,
			constants.O_RDONLY | constants.O_NONBLOCK | (dir ? constants.O_NOFOLLOW : 0),
		);
	} catch (error) {
		// Swapped between the check and the open (O_NOFOLLOW refuses a link put there).
		if (dir) throw new LocalSourceError(outsideMessage(access));
		throw new LocalSourceError(
			`${access.label} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
		);
	}
	try {
		const info = await handle.stat();
		if (dir) {
			const real = await realPathOf(handle, path, info);
			if (!real || !isInside(dir, real)) throw new LocalSourceError(outsideMessage(access));
		}
		if (!info.isFile()) throw new LocalSourceError(`${access.label} ${dir ? given : path} is not a file`);
		return { handle, size: info.size };
	} catch (error) {
		await handle.close();
		throw error;
	}
}
