/**
 * A throwaway copy of the repository for mutants: the files git knows (tracked, and untracked ones
 * not ignored, so uncommitted work is checked as it is) copied into a temporary folder, and
 * node_modules made of links to this checkout's installed packages. The working tree is never
 * written, so an interrupted run leaves nothing to restore, and two runs do not meet.
 */
import { execFileSync } from 'node:child_process';
import {
	copyFileSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readlinkSync,
	rmSync,
	symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * `node_modules` of the copy: each entry a link to this checkout's, except the workspace packages'
 * own links (`convo-contract -> ../packages/contract`), which are made again so that they point
 * into the copy.
 */
function linkModules(from: string, to: string): void {
	mkdirSync(to, { recursive: true });
	for (const name of readdirSync(from)) {
		const source = join(from, name);
		const target = join(to, name);
		const stat = lstatSync(source);
		if (stat.isSymbolicLink() && !isAbsolute(readlinkSync(source))) symlinkSync(readlinkSync(source), target);
		else if (name.startsWith('@') && stat.isDirectory()) linkModules(source, target);
		else symlinkSync(source, target);
	}
}

export function copyWorkspace(root: string): { dir: string; remove(): void } {
	const dir = mkdtempSync(join(tmpdir(), 'convo-mutants-'));
	const remove = () => rmSync(dir, { recursive: true, force: true });
	try {
		const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
			cwd: root,
			encoding: 'utf8',
			maxBuffer: 64 * 1024 * 1024,
		});
		for (const path of new Set(listed.split('\0').filter(Boolean))) {
			const source = join(root, path);
			// Listed but deleted in the working tree: the copy is of the working tree.
			if (!existsSync(source) || lstatSync(source).isDirectory()) continue;
			mkdirSync(dirname(join(dir, path)), { recursive: true });
			if (lstatSync(source).isSymbolicLink()) symlinkSync(readlinkSync(source), join(dir, path));
			else copyFileSync(source, join(dir, path));
		}
		for (const modules of [
			'node_modules',
			'runner/node_modules',
			'sandbox/node_modules',
			'packages/contract/node_modules',
			'packages/n8n-nodes-convo/node_modules',
		]) {
			if (existsSync(join(root, modules))) linkModules(resolve(root, modules), join(dir, modules));
		}
	} catch (error) {
		remove();
		throw error;
	}
	return { dir, remove };
}
