// Builds the node pack into dist/. Each node and credential is bundled with its contract
// (nodes/shared and zod) so the published package needs nothing at run time but n8n-workflow,
// which n8n provides. Icons and codex files are copied by the gulpfile.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const entryPoints = [...pkg.n8n.nodes, ...pkg.n8n.credentials].map((out) =>
	out.replace(/^dist\//, '').replace(/\.js$/, '.ts'),
);

rmSync('dist', { recursive: true, force: true });
execFileSync('npx', ['tsc', '--noEmit', '-p', 'tsconfig.json'], { stdio: 'inherit' });
await build({
	entryPoints,
	outdir: 'dist',
	outbase: '.',
	bundle: true,
	platform: 'node',
	format: 'cjs',
	target: 'node20',
	external: ['n8n-workflow'],
	sourcemap: true,
	logLevel: 'warning',
});
execFileSync('npx', ['gulp', 'build:icons'], { stdio: 'inherit' });
console.log(`built ${entryPoints.length} entry points into dist/`);
