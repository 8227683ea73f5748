/**
 * Mutation check of the Convo node's request building.
 *
 * For each operation file (nodes/Convo/actions/<resource>/<operation>.operation.ts) it finds every
 * field the operation hands to the transport (`convoRequest`): the properties of the request's
 * `params`, `query` and `body` objects, the statements that add fields to them (`body.x = ...`,
 * `Object.assign(body, variables)`),
 * and the fields of objects built by the file's own helpers (`content.call(...)`). Each field is a
 * mutant: the file's source is rewritten without it, the jest files under test/nodes that run that
 * resource and operation are run, and the mutant is killed when they fail. The file is restored
 * after every mutant, on failure and on Ctrl-C; a copy `<file>.mutation-backup` is kept on disk
 * while a mutant is in place and is restored first if a run was killed outright.
 *
 *   node --import tsx scripts/mutation-check.ts            # every operation
 *   node --import tsx scripts/mutation-check.ts message/ agent/update   # operation files whose path contains one of these
 *   node --import tsx scripts/mutation-check.ts --list     # the mutants only, nothing is run
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import ts from 'typescript';

const ROOT = resolve(__dirname, '..');
const ACTIONS = join(ROOT, 'nodes/Convo/actions');
const NODE_TESTS = join(ROOT, 'test/nodes');
const BACKUP_SUFFIX = '.mutation-backup';
/** One run at a time: a second one would take the first one's mutant for a leftover. */
const LOCK = join(ACTIONS, '.mutation-check.lock');
/** The keys of the transport's input: containers, not fields; their contents are the mutants. */
const REQUEST_PARTS = new Set(['params', 'query', 'body']);

interface Mutant {
	/** What is removed, as the request sees it: `body.bot_status`. */
	field: string;
	start: number;
	end: number;
	/** The text put in place of [start, end). */
	replacement: string;
}

interface Outcome {
	file: string;
	field: string;
	result: 'killed' | 'survived' | 'invalid';
	/** The first test file that failed. */
	by?: string;
}

// ---------------------------------------------------------------------------------------------
// Finding the fields an operation sends

function unwrap(node: ts.Expression): ts.Expression {
	let current = node;
	while (ts.isParenthesizedExpression(current) || ts.isAsExpression(current) || ts.isNonNullExpression(current)) {
		current = current.expression;
	}
	return current;
}

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
	return ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node);
}

/** Every node under `root`, not descending into nested functions (their variables are their own). */
function walkScope(root: ts.Node, visit: (node: ts.Node) => void): void {
	const step = (node: ts.Node) => {
		visit(node);
		if (node !== root && isFunctionLike(node)) return;
		ts.forEachChild(node, step);
	};
	ts.forEachChild(root, step);
}

/** The text that removes one property of an object literal and leaves valid syntax. */
function propertyRemoval(source: ts.SourceFile, property: ts.ObjectLiteralElementLike): Pick<Mutant, 'start' | 'end' | 'replacement'> {
	const literal = property.parent as ts.ObjectLiteralExpression;
	const siblings = literal.properties;
	const index = siblings.indexOf(property);
	if (siblings.length === 1) return { start: literal.getStart(source), end: literal.getEnd(), replacement: '{}' };
	if (index < siblings.length - 1) return { start: property.getStart(source), end: siblings[index + 1].getStart(source), replacement: '' };
	return { start: siblings[index - 1].getEnd(), end: property.getEnd(), replacement: '' };
}

function mutantsOf(source: ts.SourceFile): Mutant[] {
	const functions = new Map<string, ts.FunctionDeclaration>();
	source.statements.forEach((statement) => {
		if (ts.isFunctionDeclaration(statement) && statement.name) functions.set(statement.name.text, statement);
	});
	const mutants = new Map<string, Mutant>();
	// The line tells apart two places that set the same field (`content.text` for text and for templates).
	const add = (mutant: Mutant, removed: ts.Node) => {
		const line = source.getLineAndCharacterOfPosition(removed.getStart(source)).line + 1;
		mutants.set(`${mutant.start}:${mutant.end}`, { ...mutant, field: `${mutant.field} (line ${line})` });
	};
	const seen = new Set<ts.Node>();

	const traceObject = (literal: ts.ObjectLiteralExpression, scope: ts.Node, path: string, top: boolean) => {
		for (const property of literal.properties) {
			if (ts.isPropertyAssignment(property) || ts.isShorthandPropertyAssignment(property)) {
				const name = property.name.getText(source).replace(/^['"]|['"]$/g, '');
				const container = top && REQUEST_PARTS.has(name);
				if (!container) add({ field: `${path}${name}`, ...propertyRemoval(source, property) }, property);
				const value = ts.isPropertyAssignment(property) ? property.initializer : property.name;
				trace(value, scope, container ? `${name}.` : `${path}${name}.`, false);
			}
		}
	};

	const traceVariable = (name: string, scope: ts.Node, path: string) => {
		walkScope(scope, (node) => {
			if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name && node.initializer) {
				trace(node.initializer, scope, path, false);
			}
			// `Object.assign(body, variables)` adds fields: removing the statement removes them.
			if (ts.isExpressionStatement(node) && ts.isCallExpression(node.expression)) {
				const call = node.expression;
				const [target, ...sources] = call.arguments;
				if (call.expression.getText(source) === 'Object.assign' && target && ts.isIdentifier(target) && target.text === name) {
					const added = sources.map((argument) => `...${argument.getText(source)}`).join(', ');
					add({ field: `${path.replace(/\.$/, '')}{${added}}`, start: node.getStart(source), end: node.getEnd(), replacement: ';' }, node);
				}
			}
			// `body.x = ...` or `body[name] = ...` adds a field: removing the statement removes the field.
			if (
				ts.isExpressionStatement(node) &&
				ts.isBinaryExpression(node.expression) &&
				node.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken
			) {
				const target = node.expression.left;
				if ((ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target)) && ts.isIdentifier(target.expression)) {
					if (target.expression.text !== name) return;
					const field = ts.isPropertyAccessExpression(target)
						? `${path}${target.name.text}`
						: `${path.replace(/\.$/, '')}[${target.argumentExpression.getText(source)}]`;
					add({ field, start: node.getStart(source), end: node.getEnd(), replacement: ';' }, node);
				}
			}
		});
	};

	const trace = (expression: ts.Expression, scope: ts.Node, path: string, top: boolean) => {
		const node = unwrap(expression);
		if (seen.has(node)) return;
		seen.add(node);
		if (ts.isObjectLiteralExpression(node)) return traceObject(node, scope, path, top);
		if (ts.isIdentifier(node)) return traceVariable(node.text, scope, path);
		if (ts.isConditionalExpression(node)) {
			trace(node.whenTrue, scope, path, top);
			return trace(node.whenFalse, scope, path, top);
		}
		if (ts.isCallExpression(node)) {
			// A helper of this file (`content.call(this, ...)` or `content(...)`): the objects it returns.
			const callee = unwrap(node.expression);
			const target = ts.isPropertyAccessExpression(callee) && callee.name.text === 'call' ? unwrap(callee.expression) : callee;
			const helper = ts.isIdentifier(target) ? functions.get(target.text) : undefined;
			if (!helper?.body) return;
			walkScope(helper.body, (inner) => {
				if (ts.isReturnStatement(inner) && inner.expression) trace(inner.expression, helper.body!, path, false);
			});
		}
	};

	const visit = (node: ts.Node) => {
		if (ts.isCallExpression(node)) {
			const callee = unwrap(node.expression);
			const viaCall = ts.isPropertyAccessExpression(callee) && callee.name.text === 'call' && callee.expression.getText(source) === 'convoRequest';
			const direct = ts.isIdentifier(callee) && callee.text === 'convoRequest';
			const input = viaCall ? node.arguments[2] : direct ? node.arguments[1] : undefined;
			let scope: ts.Node | undefined = node.parent;
			while (scope && !isFunctionLike(scope)) scope = scope.parent;
			if (input && scope && (scope as ts.FunctionLikeDeclaration).body) {
				trace(input, (scope as ts.FunctionLikeDeclaration).body!, '', true);
			}
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return [...mutants.values()].sort((a, b) => a.start - b.start);
}

function apply(text: string, mutant: Mutant): string {
	return `${text.slice(0, mutant.start)}${mutant.replacement}${text.slice(mutant.end)}`;
}

function hasSyntaxErrors(text: string, fileName: string): boolean {
	const output = ts.transpileModule(text, { fileName, reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.CommonJS } });
	return (output.diagnostics ?? []).length > 0;
}

// ---------------------------------------------------------------------------------------------
// Which tests run an operation

/** Node test files whose workflows name this resource and operation. */
function testsFor(resource: string, operation: string): string[] {
	const resourcePattern = new RegExp(`resource:\\s*['"]${resource}['"]`);
	const operationPattern = new RegExp(`operation:\\s*['"]${operation}['"]`);
	return readdirSync(NODE_TESTS)
		.filter((name) => name.endsWith('.test.ts'))
		.map((name) => join(NODE_TESTS, name))
		.filter((path) => {
			const text = readFileSync(path, 'utf8');
			return resourcePattern.test(text) && operationPattern.test(text);
		});
}

// ---------------------------------------------------------------------------------------------
// Running, always restoring

let running: ChildProcess | undefined;
let inPlace: { file: string; original: string } | undefined;

function restore(): void {
	if (!inPlace) return;
	writeFileSync(inPlace.file, inPlace.original);
	rmSync(`${inPlace.file}${BACKUP_SUFFIX}`, { force: true });
	inPlace = undefined;
}

function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** Takes the lock, or stops when another live run holds it. */
function lock(): void {
	if (existsSync(LOCK)) {
		const holder = Number(readFileSync(LOCK, 'utf8'));
		if (holder !== process.pid && isAlive(holder)) {
			console.error(`Another mutation check (pid ${holder}) is running; wait for it to finish.`);
			process.exit(2);
		}
	}
	writeFileSync(LOCK, String(process.pid));
}

function unlock(): void {
	if (existsSync(LOCK) && Number(readFileSync(LOCK, 'utf8')) === process.pid) rmSync(LOCK);
}

/** A backup left by a run that was killed outright (SIGKILL) goes back before anything else. */
function restoreLeftovers(): void {
	for (const resource of readdirSync(ACTIONS, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
		for (const name of readdirSync(join(ACTIONS, resource.name)).filter((file) => file.endsWith(BACKUP_SUFFIX))) {
			const backup = join(ACTIONS, resource.name, name);
			renameSync(backup, backup.slice(0, -BACKUP_SUFFIX.length));
			console.warn(`restored ${relative(ROOT, backup.slice(0, -BACKUP_SUFFIX.length))} from a previous run's backup`);
		}
	}
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
	process.on(signal, () => {
		running?.kill('SIGTERM');
		restore();
		unlock();
		console.error(`\n${signal}: stopped; every operation file is restored`);
		process.exit(130);
	});
}
process.on('exit', () => {
	restore();
	unlock();
});

async function runJest(files: string[]): Promise<{ passed: boolean; firstFailure?: string }> {
	const jest = join(ROOT, 'node_modules/jest/bin/jest.js');
	// --bail: the first failing test file settles it. Jest names it on stderr ("FAIL <path>").
	const args = [jest, '--bail', '--silent', '--ci', ...files];
	let errors = '';
	const code = await new Promise<number>((done, fail) => {
		running = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
		running.stderr?.on('data', (chunk: Buffer) => {
			errors += chunk.toString();
		});
		running.once('error', fail);
		running.once('exit', (exitCode) => done(exitCode ?? 1));
	});
	running = undefined;
	if (code === 0) return { passed: true };
	const failed = /^FAIL\s+(\S+)/m.exec(errors);
	return { passed: false, firstFailure: failed ? relative(ROOT, resolve(ROOT, failed[1])) : undefined };
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const listOnly = args.includes('--list');
	const filters = args.filter((arg) => !arg.startsWith('--'));
	if (!listOnly) {
		lock();
		restoreLeftovers();
	}

	const files = readdirSync(ACTIONS, { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.flatMap((entry) =>
			readdirSync(join(ACTIONS, entry.name))
				.filter((name) => name.endsWith('.operation.ts'))
				.map((name) => join(ACTIONS, entry.name, name)),
		)
		.filter((file) => filters.length === 0 || filters.some((filter) => relative(ACTIONS, file).includes(filter)))
		.sort();

	const outcomes: Outcome[] = [];
	try {
		for (const file of files) {
			const [resource, fileName] = relative(ACTIONS, file).split('/');
			const operation = fileName.replace(/\.operation\.ts$/, '');
			const original = readFileSync(file, 'utf8');
			const source = ts.createSourceFile(file, original, ts.ScriptTarget.ES2022, true);
			const mutants = mutantsOf(source);
			const tests = testsFor(resource, operation);
			const name = `${resource}/${operation}`;
			console.log(`\n${name}: ${mutants.length} mutants; tests: ${tests.map((test) => relative(NODE_TESTS, test)).join(', ') || 'none'}`);
			for (const mutant of mutants) {
				if (listOnly) {
					console.log(`  - ${mutant.field}`);
					continue;
				}
				const mutated = apply(original, mutant);
				if (hasSyntaxErrors(mutated, file)) {
					outcomes.push({ file: name, field: mutant.field, result: 'invalid' });
					console.log(`  ! ${mutant.field}: the mutant does not parse (a defect of this script)`);
					continue;
				}
				const started = Date.now();
				let outcome: Outcome;
				copyFileSync(file, `${file}${BACKUP_SUFFIX}`);
				inPlace = { file, original };
				try {
					writeFileSync(file, mutated);
					const run = tests.length === 0 ? { passed: true } : await runJest(tests);
					outcome = run.passed
						? { file: name, field: mutant.field, result: 'survived' }
						: { file: name, field: mutant.field, result: 'killed', by: 'firstFailure' in run ? run.firstFailure : undefined };
				} finally {
					restore();
				}
				outcomes.push(outcome);
				const seconds = ((Date.now() - started) / 1000).toFixed(0);
				console.log(`  ${outcome.result === 'killed' ? 'killed  ' : 'SURVIVED'} ${mutant.field}${outcome.by ? ` (by ${outcome.by})` : ''} ${seconds} s`);
			}
		}
	} finally {
		restore();
	}
	if (listOnly) return;

	const count = (result: Outcome['result']) => outcomes.filter((outcome) => outcome.result === result).length;
	console.log(`\nmutants ${outcomes.length}, killed ${count('killed')}, survived ${count('survived')}, invalid ${count('invalid')}`);
	for (const outcome of outcomes.filter((entry) => entry.result !== 'killed')) console.log(`  ${outcome.result}: ${outcome.file} ${outcome.field}`);
	process.exitCode = count('survived') + count('invalid') > 0 ? 1 : 0;
}

void main().catch((error: unknown) => {
	restore();
	console.error(error);
	process.exit(2);
});
