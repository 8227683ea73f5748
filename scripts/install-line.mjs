// Prints the lines that install the node pack through n8n's environment-managed community packages
// (n8n 2.21 and later; with n8n 3.0's defaults the way an unverified package installs):
//   N8N_COMMUNITY_PACKAGES_MANAGED_BY_ENV=true
//   N8N_COMMUNITY_PACKAGES=[{"name":"n8n-nodes-convo","version":"…","checksum":"sha512-…"}]
// The checksum is what npm records as the published version's dist.integrity (sha512 of the
// tarball's bytes, base64), which n8n compares with the registry's before it installs.
//   node scripts/install-line.mjs packed/n8n-nodes-convo-0.1.0.tgz   for that tarball
//   node scripts/install-line.mjs                                     packs the pack first (dist/ built)
//   --json                                                            the entry alone, as JSON
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

function integrity(bytes) {
	return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

function installEntry(tarball) {
	const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
	return { name: manifest.name, version: manifest.version, checksum: integrity(readFileSync(tarball)) };
}

function packed(work) {
	const out = execFileSync(
		'npm',
		['pack', '-w', 'n8n-nodes-convo', '--json', '--ignore-scripts', '--pack-destination', work],
		{ cwd: root, encoding: 'utf8' },
	);
	return join(work, JSON.parse(out)[0].filename);
}

const args = process.argv.slice(2);
const given = args.find((arg) => !arg.startsWith('--'));
const work = given ? undefined : mkdtempSync(join(tmpdir(), 'convo-install-line-'));
try {
	const entry = installEntry(given ? resolve(given) : packed(work));
	if (args.includes('--json')) console.log(JSON.stringify(entry));
	else console.log(`N8N_COMMUNITY_PACKAGES_MANAGED_BY_ENV=true\nN8N_COMMUNITY_PACKAGES=${JSON.stringify([entry])}`);
} finally {
	if (work) rmSync(work, { recursive: true, force: true });
}
