#!/usr/bin/env node
// The installed package runs the built bundle (dist/main.js). In the repository, where the sources
// sit beside this file, it runs them through tsx instead, so a change is live without a build.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const fromSource = existsSync(new URL('../src/cli/main.ts', import.meta.url));
if (fromSource) {
	// tsx is a devDependency of the repository, never of the published package.
	const { register } = await import('tsx/cjs/api');
	register();
}
const main = fromSource ? require('../src/cli/main.ts') : require('../dist/main.js');
main.run(process.argv);
