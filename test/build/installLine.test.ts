// scripts/install-line.mjs prints the N8N_COMMUNITY_PACKAGES entry the README and the release job
// give users; n8n installs it only when its checksum is the registry's dist.integrity for that
// version, which npm computes when it packs. Both are read here from the same tarball.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const SCRIPT = join(ROOT, 'scripts/install-line.mjs');

describe('scripts/install-line.mjs', () => {
	let dir: string;
	let tarball: string;
	let packed: { name: string; version: string; integrity: string };

	beforeAll(() => {
		dir = mkdtempSync(join(tmpdir(), 'convo-install-line-test-'));
		copyFileSync(join(ROOT, 'packages/n8n-nodes-convo/package.json'), join(dir, 'package.json'));
		mkdirSync(join(dir, 'dist/nodes/Convo'), { recursive: true });
		writeFileSync(join(dir, 'dist/nodes/Convo/Convo.node.js'), `module.exports = { built: ${Date.now()} };\n`);
		const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8' });
		[packed] = JSON.parse(out);
		tarball = join(dir, JSON.parse(out)[0].filename);
	});

	afterAll(() => rmSync(dir, { recursive: true, force: true }));

	it("prints the entry with npm pack's integrity as the checksum", () => {
		const entry = JSON.parse(execFileSync(process.execPath, [SCRIPT, '--json', tarball], { encoding: 'utf8' }));
		const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
		expect(packed.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
		expect(entry).toEqual({ name: manifest.name, version: manifest.version, checksum: packed.integrity });
	});

	it('prints the two environment lines n8n reads', () => {
		const lines = execFileSync(process.execPath, [SCRIPT, tarball], { encoding: 'utf8' }).trim().split('\n');
		expect(lines[0]).toBe('N8N_COMMUNITY_PACKAGES_MANAGED_BY_ENV=true');
		const [key, value] = [lines[1].slice(0, lines[1].indexOf('=')), lines[1].slice(lines[1].indexOf('=') + 1)];
		expect(key).toBe('N8N_COMMUNITY_PACKAGES');
		expect(JSON.parse(value)).toEqual([{ name: packed.name, version: packed.version, checksum: packed.integrity }]);
		expect(lines).toHaveLength(2);
	});
});
