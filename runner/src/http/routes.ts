/**
 * How an API route is declared: method, URL, summary and zod schemas for its params, query and
 * JSON body, in one object. The same objects register the route (input checked before the
 * handler, a 400 naming the field otherwise) and generate GET /openapi.json.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RunnerRoute } from 'convo-contract';
import { z } from 'zod/v4';

import { UserError } from '../errors';

export interface RouteSpec<
	P extends z.ZodType = z.ZodType,
	Q extends z.ZodType = z.ZodType,
	B extends z.ZodType = z.ZodType,
> {
	method: 'GET' | 'POST' | 'PUT' | 'DELETE';
	url: string;
	summary: string;
	tag: 'campaigns' | 'reindex' | 'webhooks' | 'suppressions' | 'runner';
	/** Needs no token (the probes): listed without security in the OpenAPI document. */
	public?: boolean;
	params?: P;
	query?: Q;
	/** JSON body schema; routes that stream other content types say so in `consumes`. */
	body?: B;
	consumes?: string[];
	produces?: string[];
	/** Status and description of the success answer. */
	success: [number, string];
}

/** A route of the contract (convo-contract's RUNNER_ROUTES) as a RouteSpec's method and url. */
export function at(route: RunnerRoute): Pick<RouteSpec, 'method' | 'url'> {
	return { method: route.method, url: route.path };
}

export interface RouteInput<P, Q, B> {
	params: P;
	query: Q;
	body: B;
	request: FastifyRequest;
	reply: FastifyReply;
}

/** A request whose input breaks a route's schema: 400 naming the field. */
export class InputError extends UserError {
	constructor(
		message: string,
		readonly field?: string,
	) {
		super(message);
	}
}

function check<S extends z.ZodType>(schema: S | undefined, value: unknown, where: string): z.output<S> {
	if (!schema) return value as z.output<S>;
	const result = schema.safeParse(value);
	if (result.success) return result.data;
	const issue = result.error.issues[0];
	const field = issue.path.length > 0 ? issue.path.join('.') : where;
	throw new InputError(`${field} ${issue.message}`, field);
}

export class RouteTable {
	readonly specs: RouteSpec[] = [];

	constructor(private readonly app: FastifyInstance) {}

	add<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
		spec: RouteSpec<P, Q, B>,
		handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<unknown>,
	): void {
		this.specs.push(spec);
		this.app.route({
			method: spec.method,
			url: spec.url,
			handler: async (request, reply) => {
				const params = check(spec.params, request.params, 'path');
				const query = check(spec.query, request.query, 'query');
				const body =
					spec.body && !spec.consumes ? check(spec.body, request.body, 'body') : (request.body as z.output<B>);
				reply.code(spec.success[0]);
				return handler({ params, query, body, request, reply });
			},
		});
	}

	/** OpenAPI 3.1 from the declared routes (zod -> JSON Schema). */
	openApi(title: string, version: string): Record<string, unknown> {
		const paths: Record<string, Record<string, unknown>> = {};
		const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });
		for (const spec of this.specs) {
			const path = spec.url.replace(/:([A-Za-z_]+)/g, '{$1}');
			const parameters: unknown[] = [];
			for (const [location, source] of [
				['path', spec.params],
				['query', spec.query],
			] as const) {
				const json = source
					? (schema(source) as { properties?: Record<string, unknown>; required?: string[] })
					: undefined;
				for (const [name, property] of Object.entries(json?.properties ?? {})) {
					parameters.push({
						name,
						in: location,
						required: location === 'path' || (json?.required ?? []).includes(name),
						schema: property,
					});
				}
			}
			const content: Record<string, unknown> = {};
			if (spec.body) content['application/json'] = { schema: schema(spec.body) };
			for (const type of spec.consumes ?? [])
				if (type !== 'application/json') content[type] = { schema: { type: 'string' } };
			paths[path] = {
				...paths[path],
				[spec.method.toLowerCase()]: {
					summary: spec.summary,
					tags: [spec.tag],
					parameters,
					...(Object.keys(content).length > 0 ? { requestBody: { required: true, content } } : {}),
					security: spec.public ? [] : [{ bearer: [] }],
					responses: {
						[spec.success[0]]: {
							description: spec.success[1],
							content: Object.fromEntries((spec.produces ?? ['application/json']).map((type) => [type, {}])),
						},
						400: { description: 'invalid input: { status, code, message, field? }' },
						...(spec.public ? {} : { 401: { description: 'missing or wrong token' } }),
						404: { description: 'no such campaign, run or webhook' },
					},
				},
			};
		}
		return {
			openapi: '3.1.0',
			info: { title, version },
			components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
			paths,
		};
	}
}
