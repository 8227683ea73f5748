/**
 * How an API route is declared: method, URL, operation id, summary and zod schemas for its params,
 * query, JSON body and answer, in one object. The same objects register the route (input checked
 * before the handler, a 400 naming the field otherwise) and generate GET /openapi.json; a table
 * without a Fastify app only collects them, for the document alone (openApiDocument, server.ts).
 */
import type { Readable } from 'node:stream';

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RUNNER_ANSWERS, RUNNER_ROUTES, type RunnerRouteName } from 'convo-contract';
import { z } from 'zod/v4';

import { UserError } from '../errors';

/** What every cron schedule's answer holds (cronSchedules.ts cronScheduleFields); each kind adds its settings. */
export const cronScheduleAnswer = z.object({
	id: z.string(),
	cron: z.string(),
	tz: z.string(),
	state: z.enum(['active', 'paused']),
	next_run_at: z.string().nullable(),
	created_at: z.string(),
	paused_at: z.string().nullable(),
});

/** The document's groups of operations, in the order they are shown, each with what it holds. */
const ROUTE_TAGS = {
	campaigns: 'Template campaigns: create, fill, start, follow, control and report; frequency caps per number',
	reindex: 'Reindex runs of a search collection from a feed, and their cron schedules',
	suppressions: "The business's suppression list: numbers no marketing campaign sends to",
	budget: "The business's daily messaging limit: distinct customers a rolling 24 hours, every number",
	webhooks: 'URLs that receive signed runner events, and the receipts their receivers record',
	runner: "The process's probes, metrics and this document, and the service's message_created events",
} as const;

export interface RouteSpec<
	P extends z.ZodType = z.ZodType,
	Q extends z.ZodType = z.ZodType,
	B extends z.ZodType = z.ZodType,
	A extends z.ZodType = z.ZodType,
> {
	method: 'GET' | 'POST' | 'PUT' | 'DELETE';
	url: string;
	/** The operation's name in the OpenAPI document: the contract's route name where it has one. */
	operationId: string;
	summary: string;
	tag: keyof typeof ROUTE_TAGS;
	/** Needs no token (the probes): listed without security in the OpenAPI document. */
	public?: boolean;
	/** Takes the operator's events header instead of the token (eventRoutes.ts): listed with that scheme. */
	eventsHeader?: boolean;
	params?: P;
	query?: Q;
	/** JSON body schema; routes that stream other content types say so in `consumes`. */
	body?: B;
	consumes?: string[];
	produces?: string[];
	/** Status and description of the success answer. */
	success: [number, string];
	/** Error answers particular to the route, by status, besides the ones every route has. */
	errors?: Record<number, string>;
	/** The success answer as JSON (the contract's where the node pack reads it); none for text or no body. */
	answer?: A;
}

type ContractAnswers = typeof RUNNER_ANSWERS;
type ContractAnswer<N extends RunnerRouteName> = N extends keyof ContractAnswers ? ContractAnswers[N] : undefined;

/** A route of the contract (convo-contract's RUNNER_ROUTES): its method, url, name and answer schema. */
export function at<N extends RunnerRouteName>(
	name: N,
): Pick<RouteSpec, 'method' | 'url' | 'operationId'> & { answer: ContractAnswer<N> } {
	const route = RUNNER_ROUTES[name];
	const answers: Partial<Record<RunnerRouteName, z.ZodType>> = RUNNER_ANSWERS;
	return { method: route.method, url: route.path, operationId: name, answer: answers[name] as ContractAnswer<N> };
}

export interface RouteInput<P, Q, B> {
	params: P;
	query: Q;
	body: B;
	request: FastifyRequest;
	reply: FastifyReply;
}

/** What a handler may return besides its JSON answer: a streamed body, or the reply it sent itself. */
type Streamed = Readable | ReadableStream | FastifyReply;

/**
 * The fields an answer schema names, without a loose object's "any other key": what a handler's
 * answer must hold (an interface has no index signature, so it could never match one).
 */
type Named<T> = T extends readonly (infer Item)[]
	? Named<Item>[]
	: T extends object
		? { [K in keyof T as string extends K ? never : K]: Named<T[K]> }
		: T;

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

/** Every error answer: { status, code, message, field? } (convo-contract's errorBody). */
const errorAnswer = z.object({
	status: z.int(),
	code: z.string(),
	message: z.string(),
	field: z.string().optional(),
});

type JsonSchema = Record<string, unknown>;

/** A zod schema as JSON Schema inside the document: as a client sends it (input) or gets it (output). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
	const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
	return rest;
}

export class RouteTable {
	readonly specs: RouteSpec[] = [];

	/** Without `app`, routes are only collected (for the OpenAPI document). */
	constructor(private readonly app?: FastifyInstance) {}

	add<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, A extends z.ZodType = z.ZodType>(
		spec: RouteSpec<P, Q, B, A>,
		handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<Named<z.input<A>> | Streamed>,
	): void {
		if (this.specs.some((known) => known.operationId === spec.operationId))
			throw new Error(`two routes are named ${spec.operationId}`);
		this.specs.push(spec as RouteSpec);
		this.app?.route({
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

	/**
	 * OpenAPI 3.1 from the declared routes (zod -> JSON Schema): each operation with its id, tag,
	 * parameters, body and answers; every error answer is the one error body.
	 */
	openApi(title: string, version: string): Record<string, unknown> {
		const paths: Record<string, Record<string, unknown>> = {};
		const error = (description: string) => ({
			description,
			content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
		});
		for (const spec of this.specs) {
			const path = spec.url.replace(/:([A-Za-z_]+)/g, '{$1}');
			const parameters: unknown[] = [];
			for (const [location, source] of [
				['path', spec.params],
				['query', spec.query],
			] as const) {
				const json = source
					? (jsonSchema(source, 'input') as { properties?: Record<string, unknown>; required?: string[] })
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
			if (spec.body) content['application/json'] = { schema: jsonSchema(spec.body, 'input') };
			for (const type of spec.consumes ?? [])
				if (type !== 'application/json') content[type] = { schema: { type: 'string' } };
			const answers = Object.fromEntries(
				(spec.produces ?? ['application/json']).map((type) => [
					type,
					{
						schema: type === 'application/json' && spec.answer ? jsonSchema(spec.answer, 'output') : { type: 'string' },
					},
				]),
			);
			paths[path] = {
				...paths[path],
				[spec.method.toLowerCase()]: {
					operationId: spec.operationId,
					summary: spec.summary,
					tags: [spec.tag],
					parameters,
					...(Object.keys(content).length > 0 ? { requestBody: { required: true, content } } : {}),
					security: spec.eventsHeader ? [{ eventsHeader: [] }] : spec.public ? [] : [{ bearer: [] }],
					responses: {
						[spec.success[0]]: {
							description: spec.success[1],
							...(spec.answer || spec.produces ? { content: answers } : {}),
						},
						400: error('invalid input; field names it'),
						...(spec.public ? {} : { 401: error('missing or wrong token') }),
						...(spec.params ? { 404: error('no such campaign, run, schedule, webhook or entry') } : {}),
						...Object.fromEntries(Object.entries(spec.errors ?? {}).map(([status, text]) => [status, error(text)])),
					},
				},
			};
		}
		return {
			openapi: '3.1.0',
			info: { title, version, license: { name: 'MIT', identifier: 'MIT' } },
			servers: [{ url: '/', description: 'the runner that serves this document' }],
			tags: Object.entries(ROUTE_TAGS).map(([name, description]) => ({ name, description })),
			components: {
				securitySchemes: {
					bearer: { type: 'http', scheme: 'bearer' },
					// The header's name is the operator's setting, not shown here: the document is served to anyone.
					eventsHeader: {
						type: 'apiKey',
						in: 'header',
						name: 'RUNNER_EVENTS_HEADER_NAME',
						description:
							'The header the runner is configured with (RUNNER_EVENTS_HEADER_NAME), whose value is ' +
							'RUNNER_EVENTS_HEADER_VALUE; set in the service dashboard with the event trigger',
					},
				},
				schemas: { Error: jsonSchema(errorAnswer, 'output') },
			},
			paths,
		};
	}
}
