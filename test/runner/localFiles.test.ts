/**
 * The local-file rule of runner/src/localFiles.ts on a real file system, for the cases the API test
 * does not reach through HTTP: RUNNER_SOURCE_DIR set through a link, a FIFO put in a file's place,
 * and a file swapped for a link out after the check (the open refuses it).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { checkLocalSource, openLocalSource, outsideMessage, type SourceAccess } from '../../runner/src/localFiles';

const root = mkdtempSync(join(tmpdir(), 'convo-local-files-'));
const real = join(root, 'real');
mkdirSync(real);
symlinkSync(real, join(root, 'configured'));
writeFileSync(join(real, 'feed.ndjson'), '{"sku":"a"}\n');
const access: SourceAccess = { origin: 'api', sourceDir: join(root, 'configured'), label: 'source' };

test('a directory configured through a link: its files are named by either path, and what is outside is still outside', async () => {
	expect(await checkLocalSource(join(root, 'configured', 'feed.ndjson'), access)).toBe(
		join(root, 'configured', 'feed.ndjson'),
	);
	expect(await checkLocalSource(join(real, 'feed.ndjson'), access)).toBe(join(real, 'feed.ndjson'));
	expect(await checkLocalSource('feed.ndjson', access)).toBe(join(root, 'configured', 'feed.ndjson'));
	await expect(checkLocalSource(join(root, 'other.ndjson'), access)).rejects.toThrow(outsideMessage(access));
	await expect(checkLocalSource('../real/../../etc/passwd', access)).rejects.toThrow(outsideMessage(access));
});

test('a FIFO in the directory is not a file, and opening it does not hang', async () => {
	execFileSync('mkfifo', [join(real, 'pipe.ndjson')]);
	await expect(openLocalSource('pipe.ndjson', access)).rejects.toThrow('source pipe.ndjson is not a file');
});

test('a file swapped for a link out after it was checked is refused where it is opened', async () => {
	writeFileSync(join(real, 'swapped.ndjson'), '{"sku":"a"}\n');
	expect(await checkLocalSource('swapped.ndjson', access)).toBe(join(root, 'configured', 'swapped.ndjson'));
	symlinkSync('/etc/passwd', join(real, 'swapped.new'));
	renameSync(join(real, 'swapped.new'), join(real, 'swapped.ndjson'));
	await expect(openLocalSource('swapped.ndjson', access)).rejects.toThrow(outsideMessage(access));
	const opened = await openLocalSource('feed.ndjson', access);
	expect(opened.size).toBe(12);
	await opened.handle.close();
});
