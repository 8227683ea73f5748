#!/usr/bin/env node
// Runs the TypeScript sources directly: tsx compiles them on load, so there is no build step.
// The sources are CommonJS-style TypeScript (like the rest of the repository), so tsx's CJS hook.
import { createRequire } from 'node:module';
import { register } from 'tsx/cjs/api';

register();
createRequire(import.meta.url)('../src/cli.ts');
