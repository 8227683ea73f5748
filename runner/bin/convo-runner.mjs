#!/usr/bin/env node
// Runs the TypeScript sources directly (as the sandbox does): tsx compiles them on load.
import { createRequire } from 'node:module';
import { register } from 'tsx/cjs/api';

register();
const require = createRequire(import.meta.url);
require('../src/cli/main.ts').buildProgram().parseAsync(process.argv);
