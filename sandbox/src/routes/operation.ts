/**
 * Registers one contract operation: the route at its full path, then per request authentication
 * first (before the body is read), then faults, contract validation (ContractError -> 400 naming
 * the field), the handler, and the handler's answer checked against the contract's response
 * schema (a drift is 500 naming the operation and the field), so every test that calls the
 * sandbox also checks the contract.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

import {
	noBody,
	OPERATIONS,
	parseRequest,
	toContractIssues,
	type OperationKey,
	type ParsedRequest,
} from 'convo-contract';
import { authenticate } from '../auth';
import { endpointOf, fullPath } from '../endpoints';
import type { SandboxContext } from '../context';
import { HttpError } from '../httpError';
import type { Business } from '../model';

export interface RouteConfig {
	/** "METHOD /full/route/template", the key faults are set under. */
	endpoint: string;
}

type OperationHandler<K extends OperationKey> = (
	business: Business,
	input: ParsedRequest<(typeof OPERATIONS)[K]>,
	request: FastifyRequest,
) => unknown;

/** The business each request authenticated as (set before the body is read). */
const authenticated = new WeakMap<FastifyRequest, Business>();

export function defineOperation<K extends OperationKey>(
	app: FastifyInstance,
	context: SandboxContext,
	key: K,
	handler: OperationHandler<K>,
): void {
	const operation = OPERATIONS[key];
	const url = fullPath(key);
	const config: RouteConfig = { endpoint: endpointOf(key) };
	const bodyless = operation.body === noBody;
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
			const business = authenticated.get(request) as Business; // onRequest ran first and set it
			let body: unknown = request.body;
			// Clients often send `{}` or an empty JSON body on POSTs without a body; that is no body.
			if (bodyless && body !== undefined) {
				if (!isEmptyObject(body)) {
					throw new HttpError(
						400,
						`${config.endpoint} takes no body: send the request without one (an empty body or {} is fine)`,
						'body',
					);
				}
				body = undefined;
			}
			const input = parseRequest(operation, {
				params: request.params as Record<string, unknown>,
				query: request.query as Record<string, unknown>,
				body,
			}) as ParsedRequest<(typeof OPERATIONS)[K]>;
			return answerWithinContract(key, await handler(business, input, request));
		},
	});
}

const isEmptyObject = (value: unknown) =>
	value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;

/** The handler's answer as it is, or a 500 naming the operation and every field that drifted. */
function answerWithinContract(key: OperationKey, answer: unknown): unknown {
	const operation = OPERATIONS[key];
	const checked = operation.response.safeParse(answer, { reportInput: true });
	if (checked.success) return answer;
	const issues = toContractIssues(checked.error, 'response');
	throw new HttpError(
		500,
		`The sandbox's answer to ${key} (SPEC ${operation.spec}, ${operation.method} ${fullPath(key)}) ` +
			`breaks the contract's response schema: ${issues.map((issue) => issue.message).join('; ')}`,
		issues[0]?.field || undefined,
	);
}
