// Installs the packed node pack into an n8n user folder as a community package, with the steps
// n8n 2.41.1 itself takes when a user installs one (Settings → Community Nodes, or a Docker n8n:
// CommunityPackagesService.downloadPackage): the tarball unpacked into
// <.n8n>/nodes/node_modules/<name>, devDependencies, peerDependencies and optionalDependencies
// dropped from its package.json, `npm install` run in that folder with n8n's flags (it installs
// the package's runtime dependencies: none), and the package recorded in <.n8n>/nodes/package.json.
// n8n loads every package of nodes/node_modules at start; n8n-workflow and zod then resolve from
// n8n's own node_modules (n8n puts them on NODE_PATH), never from this checkout.
//
//   node test/e2e/install-package.mjs <tarball> <n8nFolder>    (n8nFolder: N8N_USER_FOLDER/.n8n)
// Prints the installed folder as JSON ({ name, version, dir }); exits non-zero on failure.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const [tarball, n8nFolder] = process.argv.slice(2).map((arg) => arg && resolve(arg));
if (!tarball || !n8nFolder) {
	console.error('usage: install-package.mjs <tarball> <n8nFolder>');
	process.exit(2);
}

const nodesDir = join(n8nFolder, 'nodes');
const nodesPackageJson = join(nodesDir, 'package.json');
mkdirSync(nodesDir, { recursive: true });
if (!existsSync(nodesPackageJson)) {
	writeFileSync(
		nodesPackageJson,
		JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }, null, 2),
	);
}

const { name } = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
const packageDir = join(nodesDir, 'node_modules', name);
rmSync(packageDir, { recursive: true, force: true });
mkdirSync(packageDir, { recursive: true });
execFileSync('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1']);

const packageJsonPath = join(packageDir, 'package.json');
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const { devDependencies, peerDependencies, optionalDependencies, ...packageJson } = JSON.parse(
	readFileSync(packageJsonPath, 'utf8'),
);
writeFileSync(packageJsonPath, JSON.stringify(packageJson, null, 2));
execFileSync(
	'npm',
	[
		'install',
		'--audit=false',
		'--fund=false',
		'--bin-links=false',
		'--install-strategy=shallow',
		'--ignore-scripts=true',
		'--package-lock=false',
	],
	// npm's own output goes to stderr: stdout is this script's answer.
	{ cwd: packageDir, stdio: ['ignore', 2, 2] },
);

const nodes = JSON.parse(readFileSync(nodesPackageJson, 'utf8'));
nodes.dependencies = { ...nodes.dependencies, [name]: packageJson.version };
writeFileSync(nodesPackageJson, JSON.stringify(nodes, null, 2));
console.log(JSON.stringify({ name, version: packageJson.version, dir: packageDir }));
