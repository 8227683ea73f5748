/**
 * GET /openapi.json: an OpenAPI 3.1 document generated from the contract package convo-contract
 * (packages/n8n-nodes-convo/nodes/shared).
 */
import { z } from 'zod/v4';

import { APIS, ERROR_CODES, OPERATION_KEYS, OPERATIONS, type OperationKey } from 'convo-contract';
import { fullPath } from './endpoints';

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
	const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
		target: 'draft-2020-12',
		unrepresentable: 'any',
		io,
	}) as JsonSchema;
	return rest;
}

function parameters(key: OperationKey): JsonSchema[] {
	const operation = OPERATIONS[key];
	const out: JsonSchema[] = [];
	for (const [location, schema] of [
		['path', operation.params],
		['query', operation.query],
	] as const) {
		const json = schemaOf(schema, 'input');
		const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
		const required = new Set((json.required ?? []) as string[]);
		for (const [name, property] of Object.entries(properties)) {
			out.push({ name, in: location, required: location === 'path' || required.has(name), schema: property });
		}
	}
	return out;
}

const errorSchema: JsonSchema = {
	type: 'object',
	required: ['status', 'code', 'message'],
	properties: {
		status: { type: 'integer' },
		code: { type: 'string', enum: Object.values(ERROR_CODES) },
		message: { type: 'string', description: 'Human message naming the field' },
		field: { type: 'string', description: 'The field a validation error is about' },
	},
};

export function openApiDocument(baseUrl: string): JsonSchema {
	const paths: Record<string, Record<string, JsonSchema>> = {};
	for (const key of OPERATION_KEYS) {
		const operation = OPERATIONS[key];
		const path = fullPath(key).replace(/:([A-Za-z_]+)/g, '{$1}');
		const errors: Record<string, JsonSchema> = {};
		for (const [status, meaning] of Object.entries({
			401: 'invalid or missing credential',
			...operation.documentedErrors,
		})) {
			errors[status] = {
				description: meaning,
				content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
			};
		}
		const entry: JsonSchema = {
			operationId: key,
			summary: `${operation.spec}: ${operation.summary}`,
			tags: [operation.api],
			security: [{ [APIS[operation.api].auth === 'bearer' ? 'bearerAuth' : 'apiKeyAuth']: [] }],
			parameters: parameters(key),
			responses: {
				200: {
					description: 'Success',
					content: { 'application/json': { schema: schemaOf(operation.response, 'output') } },
				},
				...errors,
			},
		};
		if (!(operation.body instanceof z.ZodUndefined)) {
			entry.requestBody = {
				required: true,
				content: { 'application/json': { schema: schemaOf(operation.body, 'input') } },
			};
		}
		paths[path] = { ...(paths[path] ?? {}), [operation.method.toLowerCase()]: entry };
	}
	return {
		openapi: '3.1.0',
		info: {
			title: 'Convo service (sandbox)',
			version: '1.0.0',
			description: 'Generated from the contract package convo-contract (packages/contract)',
		},
		servers: [{ url: baseUrl }],
		paths,
		components: {
			securitySchemes: {
				bearerAuth: { type: 'http', scheme: 'bearer' },
				apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
			},
			schemas: { Error: errorSchema },
		},
	};
}
