// A local copy of n8n's verification path for community packages, with the scanner n8n runs
// (@n8n/scan-community-package, pinned in devDependencies) and its own functions, provenance aside
// (that needs a package published on the public registry):
//   source   what n8n downloads is the commit the provenance names: here the files git would put in
//            that commit (tracked, and untracked ones not ignored), copied to a temporary folder. The
//            package root is found there by its package.json name, as the scanner does in a
//            monorepo, and linted with the scanner's config (the full eslint-plugin-n8n-nodes-base
//            rulesets and no-console) over SOURCE_FILE_PATTERNS.
//   imports  the same sources may not import anything outside the package root: a relative import
//            must stay inside it, a bare one must be a peer dependency (n8n-workflow) or a module the
//            scanner allows on its own (its devDependency exemption aside: n8n-node build does not
//            bundle, so a devDependency is missing at run time).
//   tarball  `npm pack -w n8n-nodes-convo`, unpacked, linted as the scanner lints the download.
// Usage:
//   node scripts/scan-package.mjs [--checkout DIR]   all legs on a git checkout (default: this one);
//                                                    the pack's dist/ must be built (npm run build)
//   node scripts/scan-package.mjs --dist DIR         the tarball leg on an unpacked package folder
// Exits non-zero and prints the findings when a leg fails.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';
import {
	analyzePackage,
	buildScanConfig,
	findPackageRoot,
	isContainedWithin,
	SOURCE_FILE_PATTERNS,
} from '@n8n/scan-community-package/scanner/scanner.mjs';

// eslint-plugin-n8n-nodes-base reads NODE_ENV=test (set by jest) as its own test run and then checks
// every node file against the name Test.node.ts; n8n's scanner never runs with it. The plugin is
// loaded later, by buildScanConfig.
if (process.env.NODE_ENV === 'test') delete process.env.NODE_ENV;

const PACKAGE_NAME = 'n8n-nodes-convo';
const TARBALL_PATTERNS = ['**/*.js', 'package.json'];
const SOURCE_DIRS = ['nodes', 'credentials'];

function report(leg, result) {
	if (result.passed) {
		console.log(`scan: ${leg} leg passed`);
		return true;
	}
	console.error(`scan: ${leg} leg FAILED: ${result.message}`);
	if (result.details) console.error(result.details);
	return false;
}

// The files of the commit n8n would download: no dist/ (its package.json carries the pack's name
// too), no node_modules/, nothing .gitignore'd.
function snapshotCheckout(checkout, work) {
	const dir = join(work, 'source');
	mkdirSync(dir);
	const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: checkout });
	const tar = execFileSync('tar', ['--null', '-cf', '-', '-T', '-'], {
		cwd: checkout,
		input: files,
		maxBuffer: 512 * 1024 * 1024,
	});
	execFileSync('tar', ['-xf', '-', '-C', dir], { input: tar, maxBuffer: 512 * 1024 * 1024 });
	return dir;
}

// findPackageRoot returns the first match; a second package.json with the same name (a fixture, a
// copy) would make n8n lint whichever it meets first.
function packageJsonsNamed(dir, name, found = []) {
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		if (entry.name === 'node_modules') continue;
		const path = join(dir, entry.name);
		if (entry.isDirectory()) packageJsonsNamed(path, name, found);
		else if (entry.name === 'package.json') {
			try {
				if (JSON.parse(readFileSync(path, 'utf8')).name === name) found.push(path);
			} catch {
				// not a package manifest n8n would match either
			}
		}
	}
	return found;
}

function sourceFiles(root) {
	const files = [];
	for (const top of SOURCE_DIRS) {
		if (!existsSync(join(root, top))) continue;
		for (const entry of readdirSync(join(root, top), { recursive: true, withFileTypes: true })) {
			if (entry.isFile() && ['.ts', '.js'].includes(extname(entry.name))) {
				files.push(join(entry.parentPath ?? entry.path, entry.name));
			}
		}
	}
	return files;
}

const moduleName = (specifier) =>
	specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];

// Asks the scanner's own no-restricted-imports rule whether it allows a module, from a package
// with no devDependencies so that its devDependency exemption does not apply.
async function scannerAllows(modules) {
	if (modules.length === 0) return new Set();
	const probe = mkdtempSync(join(tmpdir(), 'convo-scan-probe-'));
	try {
		writeFileSync(join(probe, 'package.json'), '{"name":"n8n-nodes-probe"}\n');
		mkdirSync(join(probe, 'nodes'));
		const eslint = new ESLint({
			cwd: probe,
			allowInlineConfig: false,
			overrideConfigFile: true,
			overrideConfig: await buildScanConfig(),
		});
		const allowed = new Set();
		for (const name of modules) {
			const [result] = await eslint.lintText(`import '${name}';\n`, { filePath: join(probe, 'nodes/probe.ts') });
			if (!result.messages.some((m) => m.ruleId?.endsWith('/no-restricted-imports'))) allowed.add(name);
		}
		return allowed;
	} finally {
		rmSync(probe, { recursive: true, force: true });
	}
}

async function checkImports(root) {
	const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
	const peers = new Set(Object.keys(manifest.peerDependencies ?? {}));
	const relativeEscapes = [];
	const bare = new Map();
	for (const file of sourceFiles(root)) {
		const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
		for (const { fileName: specifier } of importedFiles) {
			const where = relative(root, file);
			if (specifier.startsWith('.')) {
				if (!isContainedWithin(root, resolve(dirname(file), specifier))) {
					relativeEscapes.push(`${where}: '${specifier}' resolves outside the package root`);
				}
			} else if (!peers.has(moduleName(specifier))) {
				const name = moduleName(specifier);
				bare.set(name, [...(bare.get(name) ?? []), where]);
			}
		}
	}
	const allowed = await scannerAllows([...bare.keys()]);
	const refused = [...bare].filter(([name]) => !allowed.has(name));
	const problems = [
		...relativeEscapes,
		...refused.map(
			([name, files]) => `${files.join(', ')}: '${name}' is neither a peer dependency nor a module n8n provides`,
		),
	];
	return problems.length === 0
		? { passed: true }
		: { passed: false, message: 'imports from outside the package root', details: problems.join('\n') };
}

function packAndUnpack(checkout, packageDir, work) {
	if (!existsSync(join(checkout, packageDir, 'dist/nodes/Convo/Convo.node.js'))) {
		throw new Error('dist/ is not built: run `npm run build` first');
	}
	const out = execFileSync(
		'npm',
		['pack', '-w', PACKAGE_NAME, '--json', '--ignore-scripts', '--pack-destination', work],
		{ cwd: checkout, encoding: 'utf8' },
	);
	const [{ filename }] = JSON.parse(out);
	const dir = join(work, 'tarball');
	mkdirSync(dir);
	execFileSync('tar', ['-xzf', join(work, filename), '-C', dir, '--strip-components=1']);
	return dir;
}

async function scanCheckout(checkout) {
	const work = mkdtempSync(join(tmpdir(), 'convo-scan-'));
	try {
		const snapshot = snapshotCheckout(checkout, work);
		const named = packageJsonsNamed(snapshot, PACKAGE_NAME);
		if (named.length !== 1) {
			const where = named.map((p) => relative(snapshot, p)).join(', ') || 'none';
			console.error(
				`scan: ${named.length} package.json files named ${PACKAGE_NAME} in the checkout ` +
					`(${where}); n8n needs exactly one`,
			);
			return false;
		}
		const root = findPackageRoot(snapshot, PACKAGE_NAME);
		console.log(`scan: package root ${relative(snapshot, root)}`);
		let ok = report('source', await analyzePackage(root, SOURCE_FILE_PATTERNS));
		ok = report('imports', await checkImports(root)) && ok;
		ok =
			report(
				'tarball',
				await analyzePackage(packAndUnpack(checkout, relative(snapshot, root), work), TARBALL_PATTERNS),
			) && ok;
		return ok;
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}

const flag = (name) => {
	const at = process.argv.indexOf(name);
	return at === -1 ? undefined : resolve(process.argv[at + 1]);
};

const dist = flag('--dist');
const ok = dist
	? report('tarball', await analyzePackage(dist, TARBALL_PATTERNS))
	: await scanCheckout(flag('--checkout') ?? resolve(fileURLToPath(new URL('..', import.meta.url))));
process.exit(ok ? 0 : 1);
