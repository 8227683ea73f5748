// Builds convo-runner into dist/: one bundle of the CLI (every command, the API, the workers) with
// the runner's own sources and the contract inlined, and its `dependencies` left as imports, which
// `npm install convo-runner` brings. The console's static files are copied beside it, where
// http/console.ts reads them (`__dirname/console`), and so are the Redis scripts (`__dirname/lua`,
// redisScripts.ts). Run from anywhere: paths are the package's.
//   node runner/scripts/build.mjs [output folder]   (default: the package's dist/; the tests build
//   into a folder of their own, so a test run never replaces the dist/ a pack test is packing)
import { build } from 'esbuild';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const dist = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist');
const runtimeDependencies = Object.keys(pkg.dependencies ?? {});

rmSync(dist, { recursive: true, force: true });
await build({
	entryPoints: [join(root, 'src', 'cli', 'main.ts')],
	outfile: join(dist, 'main.js'),
	bundle: true,
	platform: 'node',
	format: 'cjs',
	target: `node${pkg.engines.node.replace(/^>=\s*/, '').split('.')[0]}`,
	// A dependency and its subpaths (`bullmq`, `stream-json/streamers/StreamArray`) stay imports.
	external: runtimeDependencies.flatMap((name) => [name, `${name}/*`]),
	// Stack traces and log lines keep readable function names; the bundle is not minified.
	sourcemap: true,
	// Node's compile cache for what the bundle loads (its dependencies: about a seventh of a command's
	// start-up); the bin enables it before the bundle itself. Quiet where it cannot: no cache, no error.
	// The banner keeps the bundle's own "use strict" first, where it counts.
	banner: { js: "'use strict';\nrequire('node:module').enableCompileCache?.();" },
	logLevel: 'warning',
});
cpSync(join(root, 'src', 'http', 'console'), join(dist, 'console'), { recursive: true });
cpSync(join(root, 'src', 'lua'), join(dist, 'lua'), { recursive: true });
console.log(`built convo-runner ${pkg.version} into ${dist}`);
