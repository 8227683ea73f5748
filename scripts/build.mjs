// Builds the node pack into dist/. Each node and credential is bundled with its contract (the
// workspace package convo-contract in packages/contract, a root devDependency, so the published
// package keeps no runtime dependencies; its `sideEffects: false` lets esbuild drop the contract
// modules a bundle does not use); n8n-workflow, zod and luxon stay imports, which n8n provides to a
// community package (all three are on the scanner's allowed list; docs/decisions.md, "Verification
// and release (#18)").
// The bundles are minified (names kept). Icons and codex files are copied by the gulpfile; the
// node icons live once, beside the Convo node, and the trigger and the credentials point there.
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
	// `zod/*` keeps `zod/v4`, the subpath zod 3.25 and 4 both export, an import.
	external: ['n8n-workflow', 'zod', 'zod/*', 'luxon'],
	minify: true,
	// n8n finds node and credential classes by name; minified class names would break that.
	keepNames: true,
	sourcemap: true,
	logLevel: 'warning',
});
execFileSync('npx', ['gulp', 'build:icons'], { stdio: 'inherit' });
console.log(`built ${entryPoints.length} entry points into dist/`);
