#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=25 --expose-gc
// The node flags above are how the runner is meant to run (the package's bin, the image's
// entrypoint): 4 MB semi-spaces, and an old generation let grow by a quarter between full
// collections instead of V8's default factor (up to 4x), so a worker at 1,000 sends/s stays under
// 200 MB and `campaign create` is flat in the audience, without a hard heap cap that could stop a
// large reindex run, and without `--optimize-for-size`, which bought the same memory with 0.5 ms
// of worker CPU per send instead of 0.3 (docs/decisions/packaging/runner-bin-v8-flags.md).
// `--expose-gc` lets `campaign create` collect between batches so its peak does not depend on when
// V8 would (campaigns/create.ts). `env -S` passes them without a wrapper process: a signal reaches
// node itself.
// The installed package runs the built bundle (dist/main.js). In the repository, where the sources
// sit beside this file, it runs them through tsx instead, so a change is live without a build.
import { existsSync } from 'node:fs';
import { createRequire, enableCompileCache } from 'node:module';

const require = createRequire(import.meta.url);
const fromSource = existsSync(new URL('../src/cli/main.ts', import.meta.url));
if (fromSource) {
	// tsx is a devDependency of the repository, never of the published package.
	const { register } = await import('tsx/cjs/api');
	register();
}
// Node's compile cache (in os.tmpdir(), or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it
// off): a fifth less CPU to start a command. Enabled before the bundle loads, so the bundle is cached too.
if (!fromSource) enableCompileCache();
const main = fromSource ? require('../src/cli/main.ts') : require('../dist/main.js');
main.run(process.argv);
