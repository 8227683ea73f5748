/**
 * The fields a Convo node operation sends, found in its source with the TypeScript compiler: what
 * it hands to a transport (`convoRequest` for the service, `runnerRequest`, `runnerJson` and
 * `runnerAnswer` for convo-runner), followed through variables, the statements that add fields to
 * them (`body.x = ...`, `body[name] = ...`, `Object.assign(body, ...)`), spreads (`{ ...settings }`),
 * the file's own helpers (`content.call(...)`) and array building (`rows.slice(...)`,
 * `items.map((_, i) => rowOf.call(this, i))`). Each field is a mutant: the source without it.
 */
import ts from 'typescript';

import type { Mutant } from './mutant';

interface Transport {
	/** The argument that is the request when called directly, and when called with `.call(this, ...)`. */
	direct: number;
	viaCall?: number;
	/** Keys of the request that are containers of fields, not fields: their contents are the mutants. */
	containers: ReadonlySet<string>;
}

const TRANSPORTS: Record<string, Transport> = {
	convoRequest: { direct: 1, viaCall: 2, containers: new Set(['params', 'query', 'body']) },
	runnerRequest: { direct: 0, viaCall: 1, containers: new Set(['body', 'qs']) },
	runnerJson: { direct: 0, viaCall: 1, containers: new Set(['body', 'qs']) },
	// runnerAnswer(context, routeName, request): `id` fills the route's path, the rest as runnerRequest.
	runnerAnswer: { direct: 2, containers: new Set(['body', 'qs']) },
};

/** Keys of a runner call that shape the node's error handling, not the request the runner receives. */
const NOT_SENT = new Set(['itemIndex', 'labelOf', 'allowStatuses']);

/** Array methods whose result holds the receiver's elements (their fields are the receiver's). */
const KEEPS_ELEMENTS = new Set(['slice', 'filter', 'concat']);
/** Array methods whose result holds what the callback returns. */
const MAPS_ELEMENTS = new Set(['map', 'flatMap']);

function unwrap(node: ts.Expression): ts.Expression {
	let current = node;
	while (
		ts.isParenthesizedExpression(current) ||
		ts.isAsExpression(current) ||
		ts.isNonNullExpression(current) ||
		ts.isSatisfiesExpression(current)
	) {
		current = current.expression;
	}
	return current;
}

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
	return (
		ts.isFunctionDeclaration(node) ||
		ts.isFunctionExpression(node) ||
		ts.isArrowFunction(node) ||
		ts.isMethodDeclaration(node)
	);
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
function propertyRemoval(
	source: ts.SourceFile,
	property: ts.ObjectLiteralElementLike,
): Pick<Mutant, 'start' | 'end' | 'replacement'> {
	const literal = property.parent as ts.ObjectLiteralExpression;
	const siblings = literal.properties;
	const index = siblings.indexOf(property);
	if (siblings.length === 1) return { start: literal.getStart(source), end: literal.getEnd(), replacement: '{}' };
	if (index < siblings.length - 1)
		return { start: property.getStart(source), end: siblings[index + 1].getStart(source), replacement: '' };
	return { start: siblings[index - 1].getEnd(), end: property.getEnd(), replacement: '' };
}

/** The transport call's request argument, if `call` is a call of a transport. */
function requestOf(
	source: ts.SourceFile,
	call: ts.CallExpression,
): { input: ts.Expression; transport: Transport } | undefined {
	const callee = unwrap(call.expression);
	if (ts.isPropertyAccessExpression(callee) && callee.name.text === 'call') {
		const transport = TRANSPORTS[callee.expression.getText(source)];
		const input = transport?.viaCall === undefined ? undefined : call.arguments[transport.viaCall];
		return transport && input ? { input, transport } : undefined;
	}
	const transport = ts.isIdentifier(callee) ? TRANSPORTS[callee.text] : undefined;
	const input = transport ? call.arguments[transport.direct] : undefined;
	return transport && input ? { input, transport } : undefined;
}

export function requestFieldMutants(source: ts.SourceFile): Mutant[] {
	const functions = new Map<string, ts.FunctionDeclaration>();
	source.statements.forEach((statement) => {
		if (ts.isFunctionDeclaration(statement) && statement.name) functions.set(statement.name.text, statement);
	});
	const mutants = new Map<string, Mutant>();
	// The line tells apart two places that set the same field (`content.text` for text and for templates).
	const add = (name: string, removal: Pick<Mutant, 'start' | 'end' | 'replacement'>, removed: ts.Node) => {
		const line = source.getLineAndCharacterOfPosition(removed.getStart(source)).line + 1;
		mutants.set(`${removal.start}:${removal.end}`, { name: `${name} (line ${line})`, ...removal });
	};
	const seen = new Set<ts.Node>();

	const traceObject = (literal: ts.ObjectLiteralExpression, scope: ts.Node, path: string, transport?: Transport) => {
		for (const property of literal.properties) {
			if (ts.isSpreadAssignment(property)) {
				// `{ ...settings }`: the spread object's fields are this object's.
				trace(property.expression, scope, path);
				continue;
			}
			if (!ts.isPropertyAssignment(property) && !ts.isShorthandPropertyAssignment(property)) continue;
			const name = property.name.getText(source).replace(/^['"]|['"]$/g, '');
			if (transport && NOT_SENT.has(name) && !transport.containers.has(name)) continue;
			const container = transport?.containers.has(name) === true;
			if (!container) add(`${path}${name}`, propertyRemoval(source, property), property);
			const value = ts.isPropertyAssignment(property) ? property.initializer : property.name;
			trace(value, scope, container ? `${name}.` : `${path}${name}.`);
		}
	};

	const traceVariable = (name: string, scope: ts.Node, path: string) => {
		walkScope(scope, (node) => {
			if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name && node.initializer) {
				trace(node.initializer, scope, path);
			}
			// `Object.assign(body, variables)` adds fields: removing the statement removes them.
			if (ts.isExpressionStatement(node) && ts.isCallExpression(node.expression)) {
				const call = node.expression;
				const [target, ...sources] = call.arguments;
				if (
					call.expression.getText(source) === 'Object.assign' &&
					target &&
					ts.isIdentifier(target) &&
					target.text === name
				) {
					const added = sources.map((argument) => `...${argument.getText(source)}`).join(', ');
					add(
						`${path.replace(/\.$/, '')}{${added}}`,
						{ start: node.getStart(source), end: node.getEnd(), replacement: ';' },
						node,
					);
				}
			}
			// `body.x = ...` or `body[name] = ...` adds a field: removing the statement removes the field.
			if (
				ts.isExpressionStatement(node) &&
				ts.isBinaryExpression(node.expression) &&
				node.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken
			) {
				const target = node.expression.left;
				if (
					(ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target)) &&
					ts.isIdentifier(target.expression)
				) {
					if (target.expression.text !== name) return;
					const field = ts.isPropertyAccessExpression(target)
						? `${path}${target.name.text}`
						: `${path.replace(/\.$/, '')}[${target.argumentExpression.getText(source)}]`;
					add(field, { start: node.getStart(source), end: node.getEnd(), replacement: ';' }, node);
				}
			}
		});
	};

	/** What a function returns: the expression of an arrow, or each `return` of a body. */
	const traceReturns = (fn: ts.FunctionLikeDeclaration, path: string) => {
		if (!fn.body) return;
		if (!ts.isBlock(fn.body)) return trace(fn.body, fn.body, path);
		const body = fn.body;
		walkScope(body, (inner) => {
			if (ts.isReturnStatement(inner) && inner.expression) trace(inner.expression, body, path);
		});
	};

	const trace = (expression: ts.Expression, scope: ts.Node, path: string, transport?: Transport) => {
		const node = unwrap(expression);
		if (seen.has(node)) return;
		seen.add(node);
		if (ts.isObjectLiteralExpression(node)) return traceObject(node, scope, path, transport);
		if (ts.isIdentifier(node)) return traceVariable(node.text, scope, path);
		if (ts.isConditionalExpression(node)) {
			trace(node.whenTrue, scope, path);
			return trace(node.whenFalse, scope, path);
		}
		if (!ts.isCallExpression(node)) return;
		const callee = unwrap(node.expression);
		if (ts.isPropertyAccessExpression(callee) && KEEPS_ELEMENTS.has(callee.name.text)) {
			// `rows.slice(a, b)`: the elements are the rows'.
			return trace(callee.expression, scope, path.endsWith('[].') ? path : `${path.replace(/\.$/, '')}[].`);
		}
		if (ts.isPropertyAccessExpression(callee) && MAPS_ELEMENTS.has(callee.name.text)) {
			// `items.map((_, i) => rowOf.call(this, i))`: the elements are what the callback returns.
			const callback = node.arguments[0] && unwrap(node.arguments[0]);
			if (callback && (ts.isArrowFunction(callback) || ts.isFunctionExpression(callback)))
				traceReturns(callback, path.endsWith('[].') ? path : `${path.replace(/\.$/, '')}[].`);
			return;
		}
		// A helper of this file (`content.call(this, ...)` or `content(...)`): the objects it returns.
		const target =
			ts.isPropertyAccessExpression(callee) && callee.name.text === 'call' ? unwrap(callee.expression) : callee;
		const helper = ts.isIdentifier(target) ? functions.get(target.text) : undefined;
		if (helper) traceReturns(helper, path);
	};

	const visit = (node: ts.Node) => {
		if (ts.isCallExpression(node)) {
			const request = requestOf(source, node);
			let scope: ts.Node | undefined = node.parent;
			while (scope && !isFunctionLike(scope)) scope = scope.parent;
			const body = scope && (scope as ts.FunctionLikeDeclaration).body;
			if (request && body) trace(request.input, body, '', request.transport);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return [...mutants.values()].sort((a, b) => a.start - b.start);
}
