/**
 * Registers one contract operation: the route at its full path, then per request authentication
 * first (before the body is read), then faults, contract validation (ContractError -> 400 naming
 * the field), and the handler.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

import { APIS, OPERATIONS, parseRequest, type OperationKey, type ParsedRequest } from '../../../nodes/shared';
import { authenticate } from '../auth';
import type { SandboxContext } from '../context';
import type { Business } from '../model';

export interface RouteConfig {
	/** "METHOD /full/route/template", the key faults are set under. */
	endpoint: string;
}

export type OperationHandler<K extends OperationKey> = (
	business: Business,
	input: ParsedRequest<(typeof OPERATIONS)[K]>,
	request: FastifyRequest,
) => unknown;

/** The business each request authenticated as (set before the body is read). */
const authenticated = new WeakMap<FastifyRequest, Business>();

export function fullPath(key: OperationKey): string {
	const operation = OPERATIONS[key];
	return `${APIS[operation.api].prefix}${operation.path}`;
}

export function defineOperation<K extends OperationKey>(
	app: FastifyInstance,
	context: SandboxContext,
	key: K,
	handler: OperationHandler<K>,
): void {
	const operation = OPERATIONS[key];
	const url = fullPath(key);
	const config: RouteConfig = { endpoint: `${operation.method} ${url}` };
	const bodyless = operation.body === OPERATIONS.getMessageStatus.body;
	app.route({
		method: operation.method,
		url,
		config,
		// Authentication runs before the body is read, so a wrong credential is 401 whatever the
		// body (too large, wrong content type, invalid JSON).
		onRequest: async (request) => {
			authenticated.set(request, authenticate(context.store, operation.api, request));
		},
		handler: async (request) => {
			const business = authenticated.get(request) ?? authenticate(context.store, operation.api, request);
			let body: unknown = request.body;
			// Clients often send `{}` or an empty JSON body on POSTs without a body; that is no body.
			if (bodyless && body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) {
				body = undefined;
			}
			const input = parseRequest(operation, {
				params: request.params as Record<string, unknown>,
				query: request.query as Record<string, unknown>,
				body,
			}) as ParsedRequest<(typeof OPERATIONS)[K]>;
			return handler(business, input, request);
		},
	});
}
