/**
 * The Fastify app: JSON parsing with a 1 MB limit, one error body shape for every failure
 * (ContractError and HttpError included), faults on API routes, and every route module.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';

import { ContractError, errorBody } from 'convo-contract';
import type { SandboxContext } from './context';
import { HttpError } from './httpError';
import { openApiDocument } from './openapi';
import { adminRoutes } from './routes/admin';
import { agentRoutes } from './routes/agents';
import { contactRoutes } from './routes/contacts';
import { conversationRoutes } from './routes/conversations';
import { messagingRoutes } from './routes/messaging';
import type { RouteConfig } from './routes/operation';
import { searchRoutes } from './routes/search';
import { templateRoutes } from './routes/templates';

declare module 'fastify' {
	interface FastifyRequest {
		/** When the request arrived, on the sandbox's clock (set first thing, in onRequest). */
		receivedAtMs: number;
	}
}

const BODY_LIMIT_BYTES = 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function buildApp(context: SandboxContext, options: { logger?: boolean } = {}): FastifyInstance {
	const app = Fastify({
		logger: options.logger ?? false,
		bodyLimit: BODY_LIMIT_BYTES,
		routerOptions: { maxParamLength: 500 },
	});

	// JSON only (docs/decisions/sandbox/status-codes.md: any other content type is 415). Our own
	// parser: an empty body is no body, and invalid JSON is a 400 in our shape.
	app.removeAllContentTypeParsers();
	app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, raw, done) => {
		const text = String(raw);
		if (text.trim() === '') return done(null, undefined);
		try {
			done(null, JSON.parse(text));
		} catch (error) {
			done(new HttpError(400, `body is not valid JSON: ${(error as Error).message}`, 'body'), undefined);
		}
	});

	app.setErrorHandler((error: FastifyError | HttpError | ContractError, request, reply) => {
		if (error instanceof HttpError) {
			return reply.code(error.statusCode).headers(error.headers).send(error.body);
		}
		if (error instanceof ContractError) return reply.code(400).send(errorBody(400, error.message, error.field));
		if ((error as FastifyError).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
			const sent = (request.headers['content-type'] ?? 'none').split(';')[0].trim().slice(0, 100);
			return reply
				.code(415)
				.send(
					errorBody(
						415,
						`Content-Type ${sent} is not supported: send the body as JSON with Content-Type: application/json`,
						'content-type',
					),
				);
		}
		const status = (error as FastifyError).statusCode;
		if (typeof status === 'number' && status >= 400 && status < 500) {
			return reply.code(status).send(errorBody(status, error.message));
		}
		request.log.error(error);
		return reply.code(500).send(errorBody(500, 'Internal error in the sandbox'));
	});

	app.setNotFoundHandler((request, reply) => {
		const path = request.url.split('?')[0];
		reply.code(404).send(errorBody(404, `No endpoint ${request.method} ${path}`));
	});

	const endpointOfRequest = (request: FastifyRequest) =>
		(request.routeOptions.config as Partial<RouteConfig> | undefined)?.endpoint;

	// Counted on arrival, before authentication: what the service received, and when.
	app.decorateRequest('receivedAtMs', 0);
	app.addHook('onRequest', async (request) => {
		request.receivedAtMs = context.clock.now();
		// Replies due by now exist before anything is read, whether or not their timer fired yet.
		context.delivery.flushDue();
		const endpoint = endpointOfRequest(request);
		if (endpoint) {
			context.requests.record(endpoint);
			context.delivery.checks.record(endpoint, request.params, request.query, request.receivedAtMs);
		}
	});

	// Faults apply to the service's endpoints once authenticated and after the body was read.
	app.addHook('preHandler', async (request, reply) => {
		if (!context.faults.active) return;
		const endpoint = endpointOfRequest(request);
		if (!endpoint) return;
		const decision = context.faults.decide(endpoint);
		if (decision.latencyMs > 0) await sleep(decision.latencyMs);
		switch (decision.kind) {
			case 'pass':
				return;
			case 'drop':
				reply.hijack();
				request.raw.socket.destroy();
				return reply;
			case 'rateLimited':
				return reply
					.code(429)
					.header('retry-after', String(decision.retryAfterSeconds))
					.send(errorBody(429, `Too many requests; retry after ${decision.retryAfterSeconds} seconds`));
			case 'error':
				return reply.code(decision.status).send(errorBody(decision.status, `Injected fault: ${decision.status}`));
		}
	});

	messagingRoutes(app, context);
	searchRoutes(app, context);
	contactRoutes(app, context);
	conversationRoutes(app, context);
	templateRoutes(app, context);
	agentRoutes(app, context);
	adminRoutes(app, context);
	app.get('/openapi.json', async () => openApiDocument(context.links.baseUrl));
	return app;
}
