// The scan step (scripts/scan-package.mjs, run by CI after the build) must fail the build when a
// shipped bundle holds what n8n's scanner refuses. Its tarball leg is run here on a package
// folder shaped like the published one: a clean bundle passes, the same bundle with a console
// call (what the bundled zod once shipped) or a require of a package n8n does not provide fails.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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
