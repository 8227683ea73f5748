// Refuses to pack convo-runner without what it needs to run: the bundle `npm run build -w
// convo-runner` writes (dist/main.js, the console and the Redis scripts beside it), the bin,
// README.md and LICENSE. npm itself packs whatever is there, so without this a pack made before a
// build holds a bin that cannot start. It is the package's `prepack`, and the root's `npm run pack:runner` runs it
// before `npm pack`, so the rule holds where the repository's .npmrc turns lifecycle scripts off too.
//   node runner/scripts/check-bundle.mjs [package folder]   (default: this script's package)
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const needed = [
	'dist/main.js',
	'dist/console/index.html',
	'dist/lua/lock/takeLock-1.lua',
	...Object.values(pkg.bin ?? {}),
	'README.md',
	'LICENSE',
];
const missing = needed.filter((file) => !existsSync(join(root, file)));
if (missing.length > 0) {
	const where = relative(process.cwd(), root) || '.';
	console.error(
		`${pkg.name}: cannot pack ${where}: missing ${missing.join(', ')}. Build the bundle first: ` +
			`npm run build -w ${pkg.name}`,
	);
	process.exit(1);
}
console.error(`${pkg.name}: ${needed.join(', ')} present`);
