// Runs n8n's community package scanner (@n8n/scan-community-package, pinned in devDependencies)
// the way n8n's verification runs it, without the registry: the source leg lints the pack's folder
// (packages/n8n-nodes-convo, the package root n8n finds by name) with SOURCE_FILE_PATTERNS
// (nodes/, the contract in nodes/shared included, credentials/, package.json), the tarball leg
// lints what `npm pack` would publish with ['**/*.js', 'package.json']. Provenance is the one check left out:
// it needs a package published on the public registry.
//   node scripts/scan-package.mjs            both legs (the pack's dist/ must be built: npm run build)
//   node scripts/scan-package.mjs --dist D   the tarball leg on an unpacked package folder D
// Exits non-zero and prints the scanner's findings when a leg fails.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzePackage, SOURCE_FILE_PATTERNS } from '@n8n/scan-community-package/scanner/scanner.mjs';

const root = resolve(fileURLToPath(new URL('../packages/n8n-nodes-convo', import.meta.url)));
const TARBALL_PATTERNS = ['**/*.js', 'package.json'];

function report(leg, result) {
	if (result.passed) {
		console.log(`scan: ${leg} leg passed`);
		return true;
	}
	console.error(`scan: ${leg} leg FAILED: ${result.message}`);
	if (result.details) console.error(result.details);
	return false;
}

// `npm pack` into a throwaway folder, unpacked there as the scanner unpacks a download.
function packAndUnpack() {
	if (!existsSync(join(root, 'dist/nodes/Convo/Convo.node.js'))) {
		throw new Error('dist/ is not built: run `npm run build` first');
	}
	const work = mkdtempSync(join(tmpdir(), 'convo-scan-'));
	const out = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
		cwd: root,
		encoding: 'utf8',
	});
	const tarball = out.trim().split('\n').pop();
	const dir = join(work, 'package');
	execFileSync('tar', ['-xzf', join(work, tarball), '-C', work]);
	return { work, dir };
}

const distFlag = process.argv.indexOf('--dist');
let ok = true;
if (distFlag !== -1) {
	ok = report('tarball', await analyzePackage(resolve(process.argv[distFlag + 1]), TARBALL_PATTERNS));
} else {
	ok = report('source', await analyzePackage(root, SOURCE_FILE_PATTERNS)) && ok;
	const { work, dir } = packAndUnpack();
	try {
		ok = report('tarball', await analyzePackage(dir, TARBALL_PATTERNS)) && ok;
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}
process.exit(ok ? 0 : 1);
