/**
 * The control API, the operator console and the metrics, served by `convo-runner start` with
 * Fastify. Every route but GET /healthz (and the sign-in page) needs the bearer token or the
 * console's session cookie; one error body everywhere: { status, code, message, field? }.
 */
import type { AddressInfo } from 'node:net';

import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

import { errorBody } from '../../../nodes/shared';
import { ConflictError, NotFoundError, UserError, type RunnerContext } from '../context';
import { Auth, CSRF_HEADER, SESSION_COOKIE } from './auth';
import { campaignRoutes, PayloadTooLarge } from './campaignRoutes';
import { reindexRoutes } from './reindexRoutes';
import { webhookRoutes } from './webhookRoutes';
import { receiptRoutes } from './receiptRoutes';
import { consoleRoutes } from './console';
import { RunnerMetrics } from './metrics';
import { InputError, RouteTable } from './routes';
import { LimitError } from '../limits';

export interface HttpOptions {
	token: string;
	host: string;
	port: number;
	/** Whether this process's workers are running (for /healthz). */
	workersRunning: () => boolean;
}

export interface RunningHttp {
	url: string;
	app: FastifyInstance;
	close(): Promise<void>;
}

/** Routes anyone may call: the health check, the sign-in page and its form, the page's stylesheet. */
const PUBLIC = new Set(['GET /healthz', 'GET /login', 'POST /session', 'GET /console/app.css']);

function statusOf(error: unknown): number {
	if (error instanceof NotFoundError) return 404;
	if (error instanceof ConflictError) return 409;
	if (error instanceof PayloadTooLarge) return 413;
	if (error instanceof LimitError) return error.status;
	if (error instanceof UserError) return 400;
	const status = (error as FastifyError).statusCode;
	return typeof status === 'number' && status >= 400 && status < 500 ? status : 500;
}

export function buildServer(context: RunnerContext, options: HttpOptions): FastifyInstance {
	const app = Fastify({ logger: false, bodyLimit: context.config.RUNNER_UPLOAD_LIMIT_BYTES, trustProxy: false });
	const auth = new Auth(options.token);
	void app.register(cookie);

	// Uploads reach the handler as the raw stream: the CSV/NDJSON parser reads them as they arrive.
	// Their size is counted by the route (413 once the client has sent everything), not by Fastify's
	// bodyLimit, which would answer mid-upload and leave the client writing into a closed request.
	app.addContentTypeParser(['text/csv', 'application/x-ndjson', 'application/ndjson'], { bodyLimit: Number.MAX_SAFE_INTEGER }, (_request, payload, done) => done(null, payload));
	app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))));

	app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
		const path = request.url.split('?')[0];
		if (PUBLIC.has(`${request.method} ${path}`)) return;
		if (auth.bearerOk(request.headers.authorization)) return;
		const session = request.cookies?.[SESSION_COOKIE];
		if (auth.sessionOk(session)) {
			if (request.method === 'GET' || request.method === 'HEAD') return;
			// Cookie-borne writes must come from the console itself: its CSRF token, or our own origin.
			const header = request.headers[CSRF_HEADER];
			const origin = request.headers.origin;
			if ((typeof header === 'string' && header === auth.csrfFor(session as string)) || origin === `http://${request.headers.host}`) return;
			return reply.code(403).send(errorBody(403, 'this request needs the console CSRF token'));
		}
		if (request.method === 'GET' && !path.startsWith('/api/') && (request.headers.accept ?? '').includes('text/html')) return reply.redirect('/login');
		return reply.code(401).send(errorBody(401, 'missing or wrong token'));
	});

	app.setErrorHandler((error, request, reply) => {
		const status = statusOf(error);
		if (status === 500) context.log.error({ err: (error as Error).message, url: request.url }, 'control API error');
		const message = status === 500 ? 'internal error in the runner' : (error as Error).message;
		return reply.code(status).send(errorBody(status, message, error instanceof InputError || error instanceof LimitError ? error.field : undefined));
	});
	app.setNotFoundHandler((request, reply) => reply.code(404).send(errorBody(404, `No route ${request.method} ${request.url.split('?')[0]}`)));

	const routes = new RouteTable(app);
	routes.add({ method: 'GET', url: '/healthz', tag: 'runner', summary: '200 when Redis answers and the workers run, else 503 with the reason', success: [200, '{ status }'] }, async ({ reply }) => {
		const redisOk = await Promise.race([context.redis.ping().then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000))]).catch(() => false);
		const reason = !redisOk ? 'Redis does not answer' : !options.workersRunning() ? 'the workers are not running' : undefined;
		if (reason) reply.code(503);
		return reason ? { status: 'unavailable', reason } : { status: 'ok' };
	});
	campaignRoutes(routes, context);
	reindexRoutes(routes, context);
	webhookRoutes(routes, context);
	receiptRoutes(routes, context);
	const metrics = new RunnerMetrics(context);
	routes.add({ method: 'GET', url: '/metrics', tag: 'runner', summary: 'Prometheus text: BullMQ queues and the runner', produces: ['text/plain'], success: [200, 'metrics'] }, async ({ reply }) => {
		reply.type(metrics.contentType);
		return metrics.text();
	});
	routes.add({ method: 'GET', url: '/openapi.json', tag: 'runner', summary: 'This API, generated from the route schemas', success: [200, 'OpenAPI 3.1'] }, async () => routes.openApi('convo-runner control API', '1.0.0'));
	consoleRoutes(app, auth);
	mountBoard(app, context);
	return app;
}

/** bull-board at /admin/queues behind the same sign-in; send queues read-only (a retry there could send twice). */
function mountBoard(app: FastifyInstance, context: RunnerContext): void {
	const serverAdapter = new FastifyAdapter();
	serverAdapter.setBasePath('/admin/queues');
	const adapters = async () => [
		new BullMQAdapter(context.queues.control, { readOnlyMode: true, allowRetries: false }),
		new BullMQAdapter(context.queues.reindex, { readOnlyMode: true, allowRetries: false }),
		new BullMQAdapter(context.queues.events, { readOnlyMode: true, allowRetries: false }),
		...(await context.redis.smembers(context.keys.numbers)).sort().map((from) => new BullMQAdapter(context.queues.send(from), { readOnlyMode: true, allowRetries: false })),
	];
	const board = createBullBoard({ queues: [], serverAdapter });
	app.addHook('onRequest', async (request) => {
		if (request.url.startsWith('/admin/queues')) board.replaceQueues(await adapters());
	});
	void app.register(serverAdapter.registerPlugin(), { prefix: '/admin/queues' });
}

export async function startServer(context: RunnerContext, options: HttpOptions): Promise<RunningHttp> {
	const app = buildServer(context, options);
	await app.listen({ host: options.host, port: options.port });
	const { port } = app.server.address() as AddressInfo;
	const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
	return { url, app, close: () => app.close() };
}
