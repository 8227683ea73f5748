// The scan step (scripts/scan-package.mjs, run by CI after the build) must fail the build when a
// shipped bundle holds what n8n's scanner refuses. Its tarball leg is run here on a package
// folder shaped like the published one: a clean bundle passes, the same bundle with a console
// call (what the bundled zod once shipped) or a require of a package n8n does not provide fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const CLEAN_BUNDLE = [
	'"use strict";',
	'const n8n_workflow = require("n8n-workflow");',
	'const { z } = require("zod/v4");',
	'const schema = z.object({ name: z.string() });',
	'class Probe { constructor() { this.schema = schema; this.error = n8n_workflow.NodeOperationError; } }',
	'module.exports = { Probe };',
].join('\n');

function scanTarballLeg(bundle: string) {
	const dir = mkdtempSync(join(tmpdir(), 'convo-scan-test-'));
	try {
		copyFileSync(join(ROOT, 'packages/n8n-nodes-convo/package.json'), join(dir, 'package.json'));
		mkdirSync(join(dir, 'dist/nodes/Convo'), { recursive: true });
		writeFileSync(join(dir, 'dist/nodes/Convo/Convo.node.js'), bundle);
		const run = spawnSync(process.execPath, [join(ROOT, 'scripts/scan-package.mjs'), '--dist', dir], {
			cwd: ROOT,
			encoding: 'utf8',
			timeout: 60_000,
		});
		return { status: run.status, output: `${run.stdout}${run.stderr}` };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

describe('scripts/scan-package.mjs (the scanner gate)', () => {
	it('passes a bundle that imports only n8n-workflow and zod', () => {
		const result = scanTarballLeg(CLEAN_BUNDLE);
		expect(result.output).toContain('scan: tarball leg passed');
		expect(result.status).toBe(0);
	});

	it('fails on a console call in a bundle, naming the rule and the file', () => {
		const result = scanTarballLeg(`${CLEAN_BUNDLE}\nconsole.warn("unsupported schema");\n`);
		expect(result.status).toBe(1);
		expect(result.output).toContain('tarball leg FAILED');
		expect(result.output).toContain('no-console');
		expect(result.output).toContain('dist/nodes/Convo/Convo.node.js');
	});

	it('fails on a require of a package n8n does not provide', () => {
		const result = scanTarballLeg(`${CLEAN_BUNDLE}\nconst axios = require("axios");\nmodule.exports.axios = axios;\n`);
		expect(result.status).toBe(1);
		expect(result.output).toContain('no-restricted-imports');
	});
});

// The whole `npm run scan` on a temporary copy of the repository holding the pack's folder as git
// knows it (no node_modules: the scanner's rules read no types), with a stand-in dist/ (the
// tarball leg is covered above), clean or with one violation planted.
const PACK = 'packages/n8n-nodes-convo';

function copyRepository(plant?: (pack: string) => void) {
	const dir = mkdtempSync(join(tmpdir(), 'convo-scan-checkout-'));
	const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z', PACK], {
		cwd: ROOT,
		encoding: 'utf8',
	})
		.split('\0')
		.filter(Boolean);
	for (const file of [...files, '.gitignore', '.npmrc']) {
		mkdirSync(dirname(join(dir, file)), { recursive: true });
		copyFileSync(join(ROOT, file), join(dir, file));
	}
	writeFileSync(
		join(dir, 'package.json'),
		JSON.stringify({ name: 'convo-for-n8n', private: true, workspaces: [PACK] }),
	);
	mkdirSync(join(dir, PACK, 'dist/nodes/Convo'), { recursive: true });
	writeFileSync(join(dir, PACK, 'dist/nodes/Convo/Convo.node.js'), CLEAN_BUNDLE);
	copyFileSync(join(ROOT, PACK, 'package.json'), join(dir, PACK, 'dist/package.json'));
	plant?.(join(dir, PACK));
	execFileSync('git', ['init', '-q'], { cwd: dir });
	return dir;
}

function scanCheckout(plant?: (pack: string) => void) {
	const dir = copyRepository(plant);
	try {
		const run = spawnSync(process.execPath, [join(ROOT, 'scripts/scan-package.mjs'), '--checkout', dir], {
			cwd: ROOT,
			encoding: 'utf8',
			timeout: 120_000,
		});
		return { status: run.status, output: `${run.stdout}${run.stderr}` };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

const NODE_FILE = 'nodes/Convo/Convo.node.ts';
// At the end of the file: a statement before the node's imports changes what some of
// eslint-plugin-n8n-nodes-base's rules see, and the test would fail for the wrong reason.
const appendTo = (file: string, text: string) => (pack: string) =>
	writeFileSync(join(pack, file), `${readFileSync(join(pack, file), 'utf8')}\n${text}\n`);

describe('npm run scan on a checkout (source, imports and tarball legs)', () => {
	jest.setTimeout(180_000);

	it('passes the pack as it is, found by its name under packages/', () => {
		const result = scanCheckout();
		expect(result.output).toContain(`scan: package root ${PACK}`);
		expect(result.output).toContain('scan: source leg passed');
		expect(result.output).toContain('scan: imports leg passed');
		expect(result.output).toContain('scan: tarball leg passed');
		expect(result.status).toBe(0);
	});

	it('fails on a console.log in a node file', () => {
		const result = scanCheckout(appendTo(NODE_FILE, "console.log('probe');"));
		expect(result.status).toBe(1);
		expect(result.output).toContain('source leg FAILED');
		expect(result.output).toContain('no-console');
		expect(result.output).toContain('Convo.node.ts');
	});

	it('fails on a relative import that leaves the pack folder', () => {
		const result = scanCheckout(appendTo(NODE_FILE, "import { loadConfig } from '../../../../runner/src/config';"));
		expect(result.status).toBe(1);
		expect(result.output).toContain('imports leg FAILED');
		expect(result.output).toContain(`${NODE_FILE}: '../../../../runner/src/config' resolves outside the package root`);
	});

	it('fails on a bare import of a package n8n does not provide', () => {
		const result = scanCheckout(appendTo(NODE_FILE, "import axios from 'axios';"));
		expect(result.status).toBe(1);
		expect(result.output).toContain('source leg FAILED');
		expect(result.output).toContain("Import of 'axios' is not allowed");
		expect(result.output).toContain("'axios' is neither a peer dependency nor a module n8n provides");
	});

	// The scanner's own rule lets a devDependency pass (it expects bundling); n8n-node build does not
	// bundle, so at run time in n8n the import would be missing.
	it('fails on a bare import of one of the pack devDependencies', () => {
		const result = scanCheckout(appendTo(NODE_FILE, "import { runCommand } from '@n8n/node-cli';"));
		expect(result.status).toBe(1);
		expect(result.output).toContain('scan: source leg passed');
		expect(result.output).toContain("'@n8n/node-cli' is neither a peer dependency nor a module n8n provides");
	});

	it('fails on a runtime dependency in the pack package.json', () => {
		const result = scanCheckout((pack) => {
			const manifest = JSON.parse(readFileSync(join(pack, 'package.json'), 'utf8'));
			writeFileSync(
				join(pack, 'package.json'),
				JSON.stringify({ ...manifest, dependencies: { axios: '1.18.0' } }, null, 2),
			);
		});
		expect(result.status).toBe(1);
		expect(result.output).toContain('source leg FAILED');
		expect(result.output).toContain('no-runtime-dependencies');
	});
});
