import type { z } from 'zod/v4';

import { APIS, type ApiKind, type HttpMethod, type Operation } from './operations';
import { ContractError, toContractIssues, type ContractIssue, type RequestLocation } from './validation';

export interface OperationInput {
	params?: Record<string, unknown>;
	query?: Record<string, unknown>;
	body?: unknown;
}

/** A request that passed the contract, ready for any HTTP client. */
export interface WireRequest {
	method: HttpMethod;
	/** Relative to the API root, path parameters filled in and encoded. */
	path: string;
	query: Record<string, string | number | boolean>;
	body?: unknown;
}

export interface ParsedRequest<O extends Operation = Operation> {
	params: z.output<O['params']>;
	query: z.output<O['query']>;
	body: z.output<O['body']>;
}

function dropUndefined<T extends Record<string, unknown>>(record: T): T {
	return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;
}

/**
 * Validates every part of a request against the contract. All broken rules are reported together,
 * so a user fixes them in one go. Query strings may hold numbers as text (as they arrive on the wire).
 */
export function parseRequest<O extends Operation>(operation: O, input: OperationInput): ParsedRequest<O> {
	const issues: ContractIssue[] = [];
	const params = collect(operation.params, input.params ?? {}, 'path', issues);
	const query = collect(operation.query, coerceQuery(operation.query, input.query ?? {}), 'query', issues);
	const body = collect(operation.body, input.body, 'body', issues);
	if (issues.length > 0) throw new ContractError(issues);
	return { params, query, body } as ParsedRequest<O>;
}

function collect(schema: z.ZodType, value: unknown, location: RequestLocation, issues: ContractIssue[]): unknown {
	const result = schema.safeParse(value, { reportInput: true });
	if (result.success) return result.data;
	issues.push(...toContractIssues(result.error, location));
	return undefined;
}

/** The schema's own type under optional/default/nullable wrappers: "number", "string", ... */
function baseType(schema: z.ZodType | undefined): string | undefined {
	let def = (schema as { def?: { type?: string; innerType?: z.ZodType } } | undefined)?.def;
	while (def && ['optional', 'default', 'nullable', 'prefault'].includes(def.type ?? '') && def.innerType) {
		def = (def.innerType as { def?: typeof def }).def;
	}
	return def?.type;
}

/**
 * Query strings hold text as they arrive on the wire; a value becomes a number or a boolean only
 * where the query schema wants one. A digit string for a string parameter (a customer number in
 * `field_value`) stays text.
 */
function coerceQuery(schema: z.ZodType, query: Record<string, unknown>): Record<string, unknown> {
	const shape = (schema as { shape?: Record<string, z.ZodType> }).shape ?? {};
	const out: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(query)) {
		const wanted = baseType(shape[key]);
		if (typeof value === 'string' && wanted === 'number' && /^-?\d+$/.test(value.trim())) out[key] = Number(value);
		else if (typeof value === 'string' && wanted === 'boolean' && /^(true|false)$/.test(value))
			out[key] = value === 'true';
		else out[key] = value;
	}
	return out;
}

/** Validates the input (throws ContractError naming each bad field) and builds the wire request. */
export function buildRequest(operation: Operation, input: OperationInput): WireRequest {
	const parsed = parseRequest(operation, input);
	const params = parsed.params as Record<string, unknown>;
	const path = operation.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => encodeURIComponent(String(params[name])));
	const request: WireRequest = {
		method: operation.method,
		path,
		query: dropUndefined((parsed.query ?? {}) as Record<string, string | number | boolean>),
	};
	if (parsed.body !== undefined) request.body = parsed.body;
	return request;
}

/**
 * The API root for a base address as a user may type it: trailing slashes and a repeated
 * version prefix are removed, then the prefix is added once.
 * messaging: "https://host/" or "https://host/v1" -> "https://host/v1";
 * external: "https://host" or "https://host/api/external/v2/" -> "https://host/api/external/v2".
 */
export function apiRoot(api: ApiKind, baseUrl: string): string {
	const prefix = APIS[api].prefix;
	let url = baseUrl.trim().replace(/\/+$/, '');
	while (url.endsWith(prefix)) url = url.slice(0, -prefix.length).replace(/\/+$/, '');
	return `${url}${prefix}`;
}

/** The full URL of a wire request, query string included. */
export function requestUrl(api: ApiKind, baseUrl: string, request: WireRequest): string {
	const url = new URL(`${apiRoot(api, baseUrl)}${request.path}`);
	for (const [key, value] of Object.entries(request.query)) url.searchParams.set(key, String(value));
	return url.toString();
}
