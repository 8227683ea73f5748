/**
 * Mutation check: does a test fail when the code stops doing one thing? Two kinds of mutant, each
 * run against the tests that should notice it:
 *
 * - Request fields of the Convo node (scripts/mutation/requestFields.ts): every field an operation
 *   under nodes/Convo/actions hands to a transport, the service's (`convoRequest`) or the runner's
 *   (`runnerRequest`, `runnerJson`, `runnerAnswer`: the Campaign and Reindex Run operations), removed
 *   one at a time. Tests: the files under test/nodes whose workflows name the resource and the
 *   operation (`resource: 'campaign'`, `operation: 'create'`), or the resource alone for a file
 *   that is not one operation's (campaign/control.ts) or an operation no test names literally.
 * - The runner's Redis scripts, every .lua file under runner/src/lua, includes mutated where they
 *   live (scripts/mutation/luaScripts.ts): each comparison flipped, each one-line guard dropped,
 *   each write dropped. Tests: LUA_TESTS below, the fastest runner tests that exercise each file
 *   first; a later one runs only when the earlier ones let the mutant live. A mutant that leaves a
 *   script including the file unable to compile is not run.
 *
 * Everything runs in a temporary copy of the repository (scripts/mutation/workspace.ts): the
 * working tree is never written, and the copy is removed at the end, on failure and on Ctrl-C.
 *
 *   node --import tsx scripts/mutation-check.ts                      # every mutant
 *   node --import tsx scripts/mutation-check.ts message/ campaign/   # targets whose path contains one of these
 *   node --import tsx scripts/mutation-check.ts lua/settle-8.lua     # one script
 *   node --import tsx scripts/mutation-check.ts --quick lua/lock/    # only the first (fastest) test stage of each
 *   node --import tsx scripts/mutation-check.ts --list               # the mutants only, nothing is run
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import ts from 'typescript';

import { startPrivateRedis, type PrivateRedis } from '../runner/src/devRedis';
import { resolveIncludes } from '../runner/src/redisScripts';
import { applyMutant, type Mutant } from './mutation/mutant';
import { includedBy, luaFiles, luaMutants, writingFunctionsOf } from './mutation/luaScripts';
import { requestFieldMutants } from './mutation/requestFields';
import { copyWorkspace } from './mutation/workspace';

const ROOT = resolve(__dirname, '..');
const ACTIONS = 'packages/n8n-nodes-convo/nodes/Convo/actions';
const NODE_TESTS = 'test/nodes';
const LUA_DIR = 'runner/src/lua';

/**
 * The runner tests each .lua file (from runner/src/lua) is run against, fastest first: a test that
 * calls the script directly on a real Redis before one that runs whole campaigns through runner
 * processes. ledger.test.ts calls each ledger script and checks records, counters, state and
 * outbox; transitions.test.ts races state changes; spacing.test.ts drives the start gate;
 * deadjobs.test.ts a paused campaign's jobs at the gate; webhooks.test.ts whole campaigns with the
 * events of each transition counted; kill.test.ts a worker killed mid-campaign, unknown claims
 * reconciled and not-sent ones retried. A file missing here makes the check refuse to start.
 */
const LEDGER = [
	'test/runner/ledger.test.ts',
	'test/runner/transitions.test.ts',
	'test/runner/webhooks.test.ts',
	'test/runner/kill.test.ts',
];
const GATE = ['test/runner/spacing.test.ts', 'test/runner/deadjobs.test.ts'];
const SUPPRESSION = [
	'test/runner/suppression.test.ts',
	'test/runner/keywords.test.ts',
	'test/runner/optout-events.test.ts',
];
const WEBHOOK = ['test/runner/webhook-limits.test.ts', 'test/runner/webhooks.test.ts'];
/** scriptEdges.test.ts calls the small scripts directly (edge answers, expiries), in about a second. */
const EDGES = 'test/runner/scriptEdges.test.ts';
const LUA_TESTS: Record<string, string[]> = {
	'noteTemplateName-1.lua': ['test/runner/templateName.test.ts', 'test/runner/console-actions.test.ts'],
	'claim-5.lua': LEDGER,
	'settle-8.lua': LEDGER,
	// No test calls it directly: whole send jobs do (send.ts), the rate test counting the places it takes.
	'settleAndPlace-9.lua': [
		EDGES,
		'test/runner/sendJobs.test.ts',
		'test/runner/rate.test.ts',
		'test/runner/webhooks.test.ts',
		'test/runner/kill.test.ts',
	],
	'moveMany-4.lua': LEDGER,
	'resolveUnknown-6.lua': ['test/runner/ledger.test.ts', 'test/runner/cap-counts.test.ts', 'test/runner/kill.test.ts'],
	'expireClaims-4.lua': ['test/runner/ledger.test.ts', 'test/runner/kill.test.ts'],
	'includes/ledgerRecords.lua': LEDGER,
	'includes/settleRecord.lua': [
		EDGES,
		...LEDGER.slice(0, 1),
		'test/runner/dailyCounts.test.ts',
		'test/runner/cap-counts.test.ts',
		...LEDGER.slice(1),
	],
	// The start gate's claim (start-11.lua) and the tracking's requeue use it; the ledger's own scripts do not.
	'includes/jobClaim.lua': [
		EDGES,
		...GATE,
		'test/runner/cap.test.ts',
		'test/runner/cap-counts.test.ts',
		'test/runner/webhooks.test.ts',
		'test/runner/kill.test.ts',
	],
	// Its send-window guard (-3) is sendWindows.test.ts's: the gate's own tests open no window.
	'start-11.lua': [EDGES, ...GATE, 'test/runner/sendWindows.test.ts'],
	'holdStarts-1.lua': GATE,
	'restartSpacing-1.lua': [EDGES, ...GATE],
	'includes/takePlace.lua': [EDGES, ...GATE],
	'includes/startGateMath.lua': [
		EDGES,
		'test/runner/spacing.test.ts',
		'test/runner/ledger.test.ts',
		'test/runner/rate.test.ts',
	],
	'includes/cap.lua': [
		'test/runner/cap.test.ts',
		'test/runner/cap-counts.test.ts',
		'test/runner/ledger.test.ts',
		'test/runner/spacing.test.ts',
	],
	'wouldCap-2.lua': ['test/runner/cap-counts.test.ts', 'test/runner/dryRun.test.ts'],
	'capTestClaim-2.lua': ['test/runner/testSendRules.test.ts', 'test/runner/testSend.test.ts'],
	'capTestGiveBack-1.lua': ['test/runner/testSendRules.test.ts', 'test/runner/testSend.test.ts'],
	'deleteCampaign-14.lua': ['test/runner/campaignDeletion.test.ts'],
	'takeDue-2.lua': [EDGES, 'test/runner/cap.test.ts'],
	'numberState-3.lua': ['test/runner/control-feeder.test.ts', 'test/runner/control.test.ts', 'test/runner/cap.test.ts'],
	'transition-7.lua': [
		EDGES,
		'test/runner/transitions.test.ts',
		'test/runner/control.test.ts',
		'test/runner/drafts.test.ts',
		'test/runner/webhooks.test.ts',
	],
	'finished-3.lua': [EDGES, 'test/runner/transitions.test.ts', 'test/runner/webhooks.test.ts'],
	'includes/emit.lua': ['test/runner/webhooks.test.ts', 'test/runner/transitions.test.ts'],
	'emit-2.lua': [EDGES, 'test/runner/webhooks.test.ts'],
	'commitCampaign-13.lua': ['test/runner/createCrash.test.ts', 'test/runner/api.test.ts', 'test/runner/drafts.test.ts'],
	'settleOnce-1.lua': ['test/runner/api.test.ts', 'test/runner/createCrash.test.ts', 'test/runner/drafts.test.ts'],
	'applyChunk-6.lua': ['test/runner/drafts.test.ts'],
	'dropDraft-5.lua': [EDGES, 'test/runner/drafts.test.ts'],
	'changeSuppression-4.lua': [EDGES, ...SUPPRESSION],
	'pruneSuppressionChanges-3.lua': ['test/runner/suppressionChanges.test.ts'],
	'decideVariant-2.lua': ['test/runner/abTest.test.ts'],
	'settleBlocked-7.lua': [EDGES, 'test/runner/refusals.test.ts'],
	'suppressionKeyword-6.lua': SUPPRESSION,
	'applySuppressions-2.lua': [EDGES, ...SUPPRESSION],
	'openSuppressionCopy-3.lua': [EDGES, ...SUPPRESSION],
	'freeSuppressionCopy-3.lua': [EDGES, ...SUPPRESSION],
	'reserveSuppressionCopy-1.lua': [EDGES, ...SUPPRESSION],
	'includes/suppressionStored.lua': SUPPRESSION,
	'sentTo-2.lua': [EDGES, 'test/runner/keywords.test.ts', 'test/runner/optout-events.test.ts'],
	'recordReply-2.lua': [EDGES, 'test/runner/replies.test.ts'],
	'trackEnroll-5.lua': [EDGES, 'test/runner/tracking.test.ts'],
	'trackClaim-1.lua': [EDGES, 'test/runner/tracking.test.ts'],
	'trackResult-5.lua': [EDGES, 'test/runner/tracking.test.ts'],
	'trackPlaces-1.lua': [EDGES, 'test/runner/tracking.test.ts'],
	'trackRequeue-4.lua': [EDGES, 'test/runner/tracking.test.ts'],
	'includes/settleTracking.lua': [EDGES, 'test/runner/tracking.test.ts'],
	'countWebhookFailure-1.lua': WEBHOOK,
	'webhookSucceeded-1.lua': [EDGES, ...WEBHOOK],
	'recordWebhookDelivery-2.lua': ['test/runner/webhooks.test.ts'],
	'enableWebhook-1.lua': [EDGES, ...WEBHOOK],
	'takeWebhookSlot-1.lua': [EDGES, ...WEBHOOK],
	'recordReceipt-1.lua': [EDGES, 'test/runner/receipts.test.ts'],
	'countCustomer-2.lua': ['test/runner/budgetCustomers.test.ts', 'test/runner/dailyLimit.test.ts'],
	'noteBudgetWait-2.lua': ['test/runner/dailyLimit.test.ts'],
	'finishRun-2.lua': [EDGES, 'test/runner/reindex.test.ts', 'test/runner/reindex-faults.test.ts'],
	'lock/takeLock-1.lua': [
		'test/runner/lock.test.ts',
		'test/runner/reindex-guard.test.ts',
		'test/runner/api.test.ts',
		'test/runner/tracking.test.ts',
	],
	'lock/renewLock-1.lua': [
		'test/runner/lock.test.ts',
		'test/runner/reindex-guard.test.ts',
		'test/runner/api.test.ts',
		'test/runner/tracking.test.ts',
	],
	'lock/releaseLock-1.lua': [
		'test/runner/lock.test.ts',
		'test/runner/reindex-guard.test.ts',
		'test/runner/api.test.ts',
		'test/runner/tracking.test.ts',
	],
	'reserveUnderLimit-1.lua': [EDGES, 'test/runner/limits.test.ts'],
	'countAuthFailure-1.lua': [EDGES, 'test/runner/lockout.test.ts', 'test/runner/api-hardening.test.ts'],
	'authWaitLeft-1.lua': [EDGES, 'test/runner/lockout.test.ts', 'test/runner/api-hardening.test.ts'],
};

interface Target {
	/** What filters match and results name: `campaign/create`, `lua/settle-8.lua`. */
	name: string;
	/** The file mutated, from the repository's root. */
	file: string;
	mutants: Mutant[];
	/** Test files, from the root, in stages: one jest run per stage, a stage only if the earlier ones passed. */
	stages: string[][];
	/**
	 * For Lua: the scripts (files from the root) that include this file or are it, each compiled with a
	 * mutant before anything runs.
	 */
	compiles?: string[];
}

interface Outcome {
	target: string;
	mutant: string;
	result: 'killed' | 'survived' | 'invalid' | 'not run';
	/** The test file that failed. */
	by?: string;
}

// ---------------------------------------------------------------------------------------------
// What to mutate

/** Node test files that name this resource (and this operation, when given and some test names it). */
function nodeTestsFor(resource: string, operation?: string): string[] {
	const files = readdirSync(join(ROOT, NODE_TESTS))
		.filter((name) => name.endsWith('.test.ts'))
		.map((name) => join(NODE_TESTS, name));
	const naming = (pattern: RegExp) => files.filter((file) => pattern.test(readFileSync(join(ROOT, file), 'utf8')));
	const ofResource = naming(new RegExp(`resource:\\s*['"]${resource}['"]`));
	if (!operation) return ofResource;
	const ofOperation = ofResource.filter((file) =>
		new RegExp(`operation:\\s*['"]${operation}['"]`).test(readFileSync(join(ROOT, file), 'utf8')),
	);
	return ofOperation.length > 0 ? ofOperation : ofResource;
}

function nodeTargets(): Target[] {
	const targets: Target[] = [];
	for (const resource of readdirSync(join(ROOT, ACTIONS), { withFileTypes: true }).filter((entry) =>
		entry.isDirectory(),
	)) {
		for (const name of readdirSync(join(ROOT, ACTIONS, resource.name))
			.filter((file) => file.endsWith('.ts'))
			.sort()) {
			const file = join(ACTIONS, resource.name, name);
			const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true);
			const mutants = requestFieldMutants(source);
			const operation = name.endsWith('.operation.ts') ? name.slice(0, -'.operation.ts'.length) : undefined;
			if (mutants.length === 0 && !operation) continue;
			const tests = nodeTestsFor(resource.name, operation);
			targets.push({
				name: `${resource.name}/${name.replace(/(\.operation)?\.ts$/, '')}`,
				file,
				mutants,
				stages: tests.length > 0 ? [tests] : [],
			});
		}
	}
	return targets;
}

function luaTargets(): Target[] {
	const files = luaFiles(join(ROOT, LUA_DIR)).sort();
	const named = (file: string) => relative(join(ROOT, LUA_DIR), file);
	const unmapped = files.map(named).filter((file) => !LUA_TESTS[file]);
	// A script added without its tests would otherwise go unchecked without a word.
	if (unmapped.length > 0)
		throw new Error(`no tests for ${unmapped.join(', ')}: add them to LUA_TESTS in scripts/mutation-check.ts`);
	const scripts = files.filter((file) => !named(file).startsWith('includes/'));
	const writing = writingFunctionsOf(files.map((file) => readFileSync(file, 'utf8')));
	return files.map((file) => {
		const name = `lua/${named(file)}`;
		const compiles = scripts
			.filter((script) => script === file || includedBy(script).has(file))
			.map((script) => relative(ROOT, script));
		return {
			name,
			file: relative(ROOT, file),
			compiles,
			mutants: luaMutants(readFileSync(file, 'utf8'), name, writing),
			stages: LUA_TESTS[named(file)].map((test) => [test]),
		};
	});
}

// ---------------------------------------------------------------------------------------------
// Checking a mutant can run at all

function hasSyntaxErrors(text: string, fileName: string): boolean {
	const output = ts.transpileModule(text, {
		fileName,
		reportDiagnostics: true,
		compilerOptions: { module: ts.ModuleKind.CommonJS },
	});
	return (output.diagnostics ?? []).length > 0;
}

/** Redis's own compiler, on a throwaway redis-server: undefined when every script compiles, else the first error. */
async function luaError(redis: PrivateRedis, scripts: string[]): Promise<string | undefined> {
	for (const script of scripts) {
		const error = await compileError(redis, resolveIncludes(script));
		if (error) return `${relative(ROOT, script)}: ${error}`;
	}
	return undefined;
}

function compileError(redis: PrivateRedis, lua: string): Promise<string | undefined> {
	const port = new URL(redis.url).port;
	return new Promise((done) =>
		execFile('redis-cli', ['-p', port, 'SCRIPT', 'LOAD', lua], (error, stdout, stderr) => {
			const said = `${stdout}${stderr}`.trim();
			done(error || /^(ERR|\(error\))/m.test(said) ? said || String(error) : undefined);
		}),
	);
}

// ---------------------------------------------------------------------------------------------
// Running

let running: ChildProcess | undefined;

/**
 * A mutant's stage may take this many times the stage's time on the unmutated copy (and at least
 * TIME_LIMIT_FLOOR_MS) before it is stopped and counted as killed by a timeout: a mutant that makes
 * a test wait out its own timeout (an event that never comes) is noticed, and costs minutes no more.
 */
const TIME_LIMIT_FACTOR = 3;
const TIME_LIMIT_FLOOR_MS = 60_000;

interface JestRun {
	/** The first test file that failed, `timeout` when stopped at its time limit, undefined when all passed. */
	failed?: string;
	ms: number;
}

/** Runs jest on `files` in the copy, stopping it (and what it started) after `limitMs` when given. */
async function runJest(cwd: string, files: string[], limitMs?: number): Promise<JestRun> {
	// --bail: the first failing test file settles it. Jest names it on stderr ("FAIL <project> <path>").
	const args = [join(cwd, 'node_modules/jest/bin/jest.js'), '--bail', '--silent', '--ci', ...files];
	const started = Date.now();
	let errors = '';
	let stopped = false;
	const code = await new Promise<number>((done, fail) => {
		// A process group of its own: a stop ends jest and whatever its tests started (runners, redis-servers).
		const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
		running = child;
		const timer =
			limitMs === undefined
				? undefined
				: setTimeout(() => {
						stopped = true;
						stopGroup(child);
					}, limitMs);
		child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
		child.once('error', fail);
		child.once('exit', (exitCode) => {
			clearTimeout(timer);
			done(exitCode ?? 1);
		});
	});
	running = undefined;
	const ms = Date.now() - started;
	if (stopped) return { failed: 'timeout', ms };
	if (code === 0) return { ms };
	const failed = /^FAIL\s+(?:\S+\s+)?(\S+\.test\.ts)/m.exec(errors)?.[1];
	return { failed: failed ? relative(cwd, resolve(cwd, failed)) : files.join(', '), ms };
}

function stopGroup(child: ChildProcess): void {
	try {
		if (child.pid) process.kill(-child.pid, 'SIGKILL');
	} catch {
		// The group has ended already.
	}
}

const baselines = new Map<string, Promise<JestRun>>();
/**
 * Each stage of `stages` on the unmutated copy (each checked once per run): the first that fails,
 * or the time each took. A stage that fails is run once more: the first run in a fresh copy also
 * fills jest's transform cache, and a timing test (spacing.test.ts) can fail while it does.
 */
async function baseline(cwd: string, stages: string[][]): Promise<{ failing?: string; ms: number[] }> {
	const ms: number[] = [];
	for (const stage of stages) {
		const key = stage.join('\0');
		if (!baselines.has(key))
			baselines.set(
				key,
				runJest(cwd, stage).then(async (run) => (run.failed ? runJest(cwd, stage) : run)),
			);
		const run = await baselines.get(key)!;
		if (run.failed) return { failing: run.failed, ms };
		ms.push(run.ms);
	}
	return { ms };
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const listOnly = args.includes('--list');
	const quick = args.includes('--quick');
	const filters = args.filter((arg) => !arg.startsWith('--'));
	const wanted = (target: Target) =>
		filters.length === 0 || filters.some((filter) => target.name.includes(filter) || target.file.includes(filter));
	const targets = [...nodeTargets(), ...luaTargets()]
		.filter(wanted)
		.map((target) => (quick ? { ...target, stages: target.stages.slice(0, 1) } : target));
	const testsOf = (target: Target) => target.stages.map((stage) => stage.join(', ')).join(' | then ') || 'none';

	if (listOnly) {
		for (const target of targets) {
			console.log(`\n${target.name}: ${target.mutants.length} mutants; tests: ${testsOf(target)}`);
			for (const mutant of target.mutants) console.log(`  - ${mutant.name}`);
		}
		return;
	}

	const copy = copyWorkspace(ROOT);
	let redis: PrivateRedis | undefined;
	const cleanUp = () => {
		if (running) stopGroup(running);
		redis?.process.kill('SIGTERM');
		copy.remove();
	};
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
		process.on(signal, () => {
			cleanUp();
			console.error(`\n${signal}: stopped; the temporary copy is removed`);
			process.exit(130);
		});
	}
	console.log(`mutants run in ${copy.dir}`);

	const outcomes: Outcome[] = [];
	try {
		if (targets.some((target) => target.compiles)) redis = await startPrivateRedis();
		for (const target of targets) {
			console.log(`\n${target.name}: ${target.mutants.length} mutants; tests: ${testsOf(target)}`);
			const path = join(copy.dir, target.file);
			const original = readFileSync(path, 'utf8');
			// The tests must pass on the code as it is, or a failure would say nothing about a mutant.
			const { failing, ms: stageMs } = await baseline(copy.dir, target.stages);
			if (failing) {
				for (const mutant of target.mutants)
					outcomes.push({ target: target.name, mutant: mutant.name, result: 'not run' });
				console.log(`  ! not run: ${failing} fails without any mutant`);
				continue;
			}
			for (const mutant of target.mutants) {
				const mutated = applyMutant(original, mutant);
				// A .lua file is compiled where it stands in the copy, by every script that includes it.
				if (target.compiles) writeFileSync(path, mutated);
				const invalid = target.compiles
					? redis &&
						(await luaError(
							redis,
							target.compiles.map((script) => join(copy.dir, script)),
						))
					: hasSyntaxErrors(mutated, target.file)
						? 'the file does not parse'
						: undefined;
				if (invalid) {
					writeFileSync(path, original);
					outcomes.push({ target: target.name, mutant: mutant.name, result: 'invalid' });
					console.log(`  ! ${mutant.name}: not run, ${invalid.split('\n')[0]} (a defect of this script)`);
					continue;
				}
				const started = Date.now();
				let by: string | undefined;
				writeFileSync(path, mutated);
				try {
					for (const [index, stage] of target.stages.entries()) {
						const limit = Math.max(TIME_LIMIT_FLOOR_MS, TIME_LIMIT_FACTOR * stageMs[index]);
						const run = await runJest(copy.dir, stage, limit);
						by = run.failed === 'timeout' ? `a timeout: ${stage.join(', ')} past ${limit / 1000} s` : run.failed;
						if (by) break;
					}
				} finally {
					writeFileSync(path, original);
				}
				outcomes.push({ target: target.name, mutant: mutant.name, result: by ? 'killed' : 'survived', by });
				const seconds = ((Date.now() - started) / 1000).toFixed(0);
				console.log(`  ${by ? 'killed  ' : 'SURVIVED'} ${mutant.name}${by ? ` (by ${by})` : ''} ${seconds} s`);
			}
		}
	} finally {
		cleanUp();
	}

	const count = (result: Outcome['result']) => outcomes.filter((outcome) => outcome.result === result).length;
	console.log(
		`\nmutants ${outcomes.length}, killed ${count('killed')}, survived ${count('survived')}, ` +
			`invalid ${count('invalid')}, not run ${count('not run')}`,
	);
	for (const outcome of outcomes.filter((entry) => entry.result !== 'killed'))
		console.log(`  ${outcome.result}: ${outcome.target} ${outcome.mutant}`);
	process.exitCode = outcomes.length === count('killed') ? 0 : 1;
}

void main().catch((error: unknown) => {
	console.error(error);
	process.exit(2);
});
