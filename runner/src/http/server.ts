/**
 * The control API, the operator console and the metrics, served by `convo-runner start` with
 * Fastify. Every route but GET /healthz, GET /readyz (and the sign-in page) needs the bearer token
 * or the console's session cookie; one error body everywhere: { status, code, message, field? }.
 */
import type { AddressInfo } from 'node:net';

import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod/v4';

import { errorBody } from 'convo-contract';
import type { RunnerContext } from '../context';
import { liveRunners, queueDepths, runnerQueues, shownQueueName } from '../core/runners';
import { ConflictError, NotFoundError, UserError } from '../errors';
import { isRedisUnavailable, redisAnswers } from '../runtime';
import { Auth, CSRF_HEADER, SESSION_COOKIE, type SecretKind } from './auth';
import { campaignRoutes } from './campaignRoutes';
import { PayloadTooLarge } from './uploads';
import { suppressionRoutes } from './suppressionRoutes';
import { budgetRoutes } from './budgetRoutes';
import { reindexRoutes } from './reindexRoutes';
import { webhookRoutes } from './webhookRoutes';
import { receiptRoutes } from './receiptRoutes';
import { eventRoutes, eventsHeader, EVENTS_BODY_LIMIT, EVENTS_PATH } from './eventRoutes';
import { consoleRoutes } from './console';
import { RunnerMetrics } from './metrics';
import { RouteTable } from './routes';
import { LimitError } from '../limits';

export interface HttpOptions {
	token: string;
	host: string;
	port: number;
	/** Whether this process's workers are running (for /readyz). */
	workersRunning: () => boolean;
	/** Whether the process is stopping (SIGTERM): then neither alive nor ready. */
	stopping?: () => boolean;
}

export interface RunningHttp {
	url: string;
	app: FastifyInstance;
	close(): Promise<void>;
}

/**
 * Routes anyone may call: the liveness and readiness probes, the
 * sign-in page and its form, the page's stylesheet (HEAD as GET).
 */
/** Liveness and readiness: polled by Docker, Kubernetes and load balancers. */
const PROBES = new Set(['/healthz', '/readyz']);
const PUBLIC = new Set(['GET /healthz', 'GET /readyz', 'GET /login', 'POST /session', 'GET /console/app.css']);

/** Bodies of every route but those below: JSON settings, a sign-in form. */
const BODY_LIMIT = 1024 * 1024;
/** The sign-in form holds one token: a few hundred bytes. */
const FORM_LIMIT = 16 * 1024;
/** Routes whose JSON may carry recipients inline (up to 100,000 rows): RUNNER_UPLOAD_LIMIT_BYTES. */
const LARGE_BODIES = new Set(['POST /api/campaigns', 'POST /api/campaigns/:id/recipients']);

/**
 * The console's pages load only this process's own scripts and
 * styles; bull-board's UI styles elements inline and sets a <base>.
 */
const CSP =
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const BOARD_CSP = CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'").replace(
	"base-uri 'none'",
	"base-uri 'self'",
);
/** Static files that hold nothing of a user's: the only answers a browser or proxy may keep. */
const STATIC = /^\/(console|assets)\//;

type AuthKind = 'none' | 'public' | 'bearer' | 'session' | 'header';
const authKinds = new WeakMap<FastifyRequest, AuthKind>();

function statusOf(error: unknown): number {
	if (isRedisUnavailable(error)) return 503;
	if (error instanceof NotFoundError) return 404;
	if (error instanceof ConflictError) return 409;
	if (error instanceof PayloadTooLarge) return 413;
	if (error instanceof LimitError) return error.status;
	if (error instanceof UserError) return 400;
	const status = (error as FastifyError).statusCode;
	return typeof status === 'number' && status >= 400 && status < 500 ? status : 500;
}

/**
 * The origins a cookie-borne write may come from: this request's
 * own (as the trusted proxy tells it) and RUNNER_PUBLIC_URL's.
 */
function ownOrigins(request: FastifyRequest, publicUrl: string | undefined): string[] {
	return [`${request.protocol}://${request.host}`, ...(publicUrl ? [new URL(publicUrl).origin] : [])];
}

/**
 * A request's path as logs show it: the route's pattern (`/api/suppressions/:id`), never the
 * values in it; a path no route matched is shown with its sequences of digits masked, so a phone number
 * typed into a wrong path does not reach the log either.
 */
function loggedPath(request: FastifyRequest): string {
	return request.routeOptions.url ?? request.url.split('?')[0].replace(/\d{5,}/g, '…');
}

function buildServer(context: RunnerContext, options: HttpOptions): FastifyInstance {
	const { config, log } = context;
	const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT, trustProxy: config.RUNNER_TRUST_PROXY ?? false });
	const auth = new Auth(options.token, context.redis, context.keys, {
		max: config.RUNNER_AUTH_FAILURE_LIMIT,
		periodMs: config.RUNNER_AUTH_FAILURE_PERIOD,
	});
	const publicHttps = config.RUNNER_PUBLIC_URL?.startsWith('https:') ?? false;
	capConnections(app, config.RUNNER_MAX_CONNECTIONS, log);
	void app.register(cookie);

	app.addHook('onRoute', (route) => {
		const methods = Array.isArray(route.method) ? route.method : [route.method];
		if (methods.some((method) => LARGE_BODIES.has(`${method} ${route.url}`)))
			route.bodyLimit = config.RUNNER_UPLOAD_LIMIT_BYTES;
		if (route.url === EVENTS_PATH) route.bodyLimit = EVENTS_BODY_LIMIT;
	});

	// Uploads reach the handler as the raw stream: the CSV/NDJSON parser reads them as they arrive.
	// Their size is counted by the route (413 once the client has sent everything), not by Fastify's
	// bodyLimit, which would answer mid-upload and leave the client writing into a closed request.
	app.addContentTypeParser(
		['text/csv', 'application/x-ndjson', 'application/ndjson'],
		{ bodyLimit: Number.MAX_SAFE_INTEGER },
		(_request, payload, done) => done(null, payload),
	);
	app.addContentTypeParser(
		'application/x-www-form-urlencoded',
		{ parseAs: 'string', bodyLimit: FORM_LIMIT },
		(_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
	);

	/**
	 * A wrong secret of `kind`: 429 while the address has sent too many wrong ones of that kind
	 * (not counted further), else logged (address, route, reason; never the secret), counted, and
	 * answered by `answer`. The right secret never comes here, so it is never throttled.
	 */
	const wrongSecret = async (
		request: FastifyRequest,
		reply: FastifyReply,
		kind: SecretKind,
		reason: string,
		answer: () => FastifyReply,
	): Promise<FastifyReply> => {
		const waitMs = await auth.throttled(kind, request.ip);
		const path = loggedPath(request);
		const what = kind === 'events' ? 'wrong events headers' : 'failed tokens';
		if (waitMs > 0) {
			const seconds = Math.ceil(waitMs / 1000);
			log.warn(
				{ ip: request.ip, method: request.method, path, retryAfterSeconds: seconds },
				`authentication throttled: too many ${what} from this address`,
			);
			return reply
				.code(429)
				.header('retry-after', String(seconds))
				.send(errorBody(429, `too many ${what} from this address: try again in ${seconds} s`));
		}
		const failures = await auth.failed(kind, request.ip);
		log.warn({ ip: request.ip, method: request.method, path, reason, failures }, 'authentication failed');
		return answer();
	};
	/** Logs a refusal that is no guess and is not counted (a stale cookie, another scheme). */
	const refuse = (request: FastifyRequest, reason: string) =>
		log.warn({ ip: request.ip, method: request.method, path: loggedPath(request), reason }, 'authentication failed');

	app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
		const path = request.url.split('?')[0];
		// The service's events carry the operator's header, not the
		// token (eventRoutes.ts); checked before the body is read.
		if (path === EVENTS_PATH && (request.method === 'POST' || request.method === 'PUT')) {
			authKinds.set(request, 'header');
			const verdict = eventsHeader(config, request.headers);
			if (verdict === 'unset')
				return reply
					.code(404)
					.send(
						errorBody(
							404,
							'the events endpoint is not configured: set RUNNER_EVENTS_HEADER_NAME and RUNNER_EVENTS_HEADER_VALUE',
						),
					);
			if (verdict === 'ok') return;
			return wrongSecret(
				request,
				reply,
				'events',
				`missing or wrong ${config.RUNNER_EVENTS_HEADER_NAME} header on the events endpoint`,
				() => reply.code(401).send(errorBody(401, 'missing or wrong events header')),
			);
		}
		if (PUBLIC.has(`${request.method === 'HEAD' ? 'GET' : request.method} ${path}`)) {
			authKinds.set(request, 'public');
			return;
		}
		// Another scheme (e.g. Basic, from a proxy that asks for a
		// password) is not ours: the cookie may still sign the request in.
		const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
		if (bearer) {
			if (auth.tokenOk(bearer[1])) {
				authKinds.set(request, 'bearer');
				return;
			}
			return wrongSecret(request, reply, 'token', 'wrong bearer token', () =>
				reply.code(401).send(errorBody(401, 'missing or wrong token')),
			);
		}
		const session = request.cookies?.[SESSION_COOKIE];
		if (await auth.sessionOk(session)) {
			authKinds.set(request, 'session');
			if (request.method === 'GET' || request.method === 'HEAD') return;
			// Cookie-borne writes must come from the console itself: its CSRF token, or our own origin.
			const origin = request.headers.origin;
			if (
				auth.csrfOk(session as string, request.headers[CSRF_HEADER]) ||
				(origin !== undefined && ownOrigins(request, config.RUNNER_PUBLIC_URL).includes(origin))
			)
				return;
			return reply.code(403).send(errorBody(403, 'this request needs the console CSRF token'));
		}
		// A stale cookie is an operator whose session ended, not a
		// guess; another scheme can never pass: logged, not counted.
		if (session) refuse(request, 'session cookie expired, revoked or not ours');
		else if (request.headers.authorization !== undefined)
			refuse(request, 'the Authorization header is not "Bearer <token>"');
		if (request.method === 'GET' && !path.startsWith('/api/') && (request.headers.accept ?? '').includes('text/html'))
			return reply.redirect('/login');
		return reply.code(401).send(errorBody(401, 'missing or wrong token'));
	});

	app.addHook('onSend', async (request, reply, payload) => {
		const path = request.url.split('?')[0];
		reply.header('content-security-policy', path.startsWith('/admin/queues') ? BOARD_CSP : CSP);
		reply.header('x-frame-options', 'DENY');
		reply.header('x-content-type-options', 'nosniff');
		// same-origin, not no-referrer: with no-referrer Chromium posts the console's forms with `Origin: null`.
		reply.header('referrer-policy', 'same-origin');
		reply.header('cross-origin-opener-policy', 'same-origin');
		// Fastify closes at once after refusing an unread body, and a client still writing may then get a
		// reset instead of the 413; the unread rest is discarded instead (lingerAfterRefusal), as nginx does.
		if (reply.statusCode === 413 && !request.raw.complete) reply.removeHeader('connection');
		// Reports, campaign views and the console hold phone numbers: never kept by a browser or proxy.
		if (!STATIC.test(path)) reply.header('cache-control', 'no-store');
		return payload;
	});

	// The access log: one line per answer; never headers, cookies, query strings or bodies.
	app.addHook('onResponse', async (request, reply) => {
		if (reply.statusCode === 413) lingerAfterRefusal(request);
		const route = loggedPath(request);
		// An orchestrator probes every few seconds: a probe that succeeds is logged at debug only.
		const level = PROBES.has(route) && reply.statusCode < 400 ? 'debug' : 'info';
		log[level](
			{
				ip: request.ip,
				method: request.method,
				route,
				status: reply.statusCode,
				ms: Math.round(reply.elapsedTime),
				auth: authKinds.get(request) ?? 'none',
			},
			'http',
		);
	});

	app.setErrorHandler((error, request, reply) => {
		const status = statusOf(error);
		if (status === 500)
			context.log.error({ err: (error as Error).message, url: loggedPath(request) }, 'control API error');
		if (status === 503) reply.header('retry-after', '5');
		const message =
			status === 500
				? 'internal error in the runner'
				: status === 503
					? 'Redis does not answer: try again in a few seconds'
					: (error as Error).message;
		// Every input error (a route's schema, a setting, a limit) names the field as the API calls it.
		const field =
			error instanceof UserError && 'field' in error && typeof error.field === 'string' ? error.field : undefined;
		return reply.code(status).send(errorBody(status, message, field));
	});
	app.setNotFoundHandler((request, reply) =>
		reply.code(404).send(errorBody(404, `No route ${request.method} ${request.url.split('?')[0]}`)),
	);

	declareRoutes(new RouteTable(app), context, options);
	consoleRoutes(app, auth, { publicHttps, wrongSecret });
	mountBoard(app, context);
	return app;
}

/** The document's title and version (the API's own, not the package's). */
const API_TITLE = 'convo-runner control API';
const API_VERSION = '1.0.0';

/** A runner process as GET /api/runners lists it (presence.ts). */
const liveRunner = z.object({
	id: z.string(),
	role: z.enum(['start', 'worker']),
	pid: z.int(),
	host: z.string(),
	version: z.string(),
	queues: z.array(z.string()),
	started_at: z.iso.datetime(),
	last_beat_at: z.iso.datetime(),
});

const jobCount = z.int().min(0);
/** A queue's depth as GET /api/queues lists it (core/runners.ts). */
const queueDepth = z.object({
	name: z.string(),
	waiting: jobCount,
	active: jobCount,
	delayed: jobCount,
	failed: jobCount,
	completed: jobCount,
	paused: z.boolean(),
	runners: jobCount,
});

/**
 * Every route of the control API (the console's pages and the queue board aside), into `routes`:
 * with an app they are served, without one only collected for the OpenAPI document.
 */
function declareRoutes(
	routes: RouteTable,
	context: RunnerContext,
	options: Pick<HttpOptions, 'workersRunning' | 'stopping'>,
): void {
	const stopping = options.stopping ?? (() => false);
	// Liveness: answered by the event loop alone, never Redis, so an orchestrator does not restart a
	// process that is only waiting out a Redis outage.
	routes.add(
		{
			method: 'GET',
			url: '/healthz',
			operationId: 'healthz',
			tag: 'runner',
			public: true,
			summary: 'liveness: 200 while the process answers and is not stopping, else 503; never asks Redis',
			success: [200, '{ status }'],
			answer: z.object({ status: z.enum(['ok', 'stopping']) }),
		},
		async ({ reply }) => {
			if (stopping()) reply.code(503);
			return stopping() ? { status: 'stopping' as const } : { status: 'ok' as const };
		},
	);
	// Readiness: whether this process can do its work now.
	routes.add(
		{
			method: 'GET',
			url: '/readyz',
			operationId: 'readyz',
			tag: 'runner',
			public: true,
			summary:
				'readiness: 200 when Redis answers and the workers run, else 503 with the reason; runners: ' +
				'how many runner processes are alive on this Redis and prefix',
			success: [200, '{ status, runners }'],
			answer: z.object({
				status: z.enum(['ok', 'unavailable']),
				reason: z.string().optional(),
				runners: z.int().min(0).optional(),
			}),
		},
		async ({ reply }) => {
			const redisOk = await redisAnswers(context, 1000);
			const reason = stopping()
				? 'the runner is stopping'
				: !redisOk
					? 'Redis does not answer'
					: !options.workersRunning()
						? 'the workers are not running'
						: undefined;
			// Counted only when Redis answers (a count is a number, never a
			// guess); a count only, no host or pid, as the probe is public.
			const runners = redisOk ? (await liveRunners(context).catch(() => undefined))?.length : undefined;
			if (reason) reply.code(503);
			return reason ? { status: 'unavailable' as const, reason, runners } : { status: 'ok' as const, runners };
		},
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/runners',
			operationId: 'listRunners',
			tag: 'runner',
			summary:
				'The runner processes alive on this Redis and prefix (their heartbeats): role, pid, host, ' +
				'version, queues, started_at',
			success: [200, '{ runners }'],
			answer: z.object({ runners: z.array(liveRunner) }),
		},
		async () => ({
			runners: await liveRunners(context),
		}),
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/queues',
			operationId: 'listQueues',
			tag: 'runner',
			summary:
				"The runner's queues (the shared ones, then one per sending number, at most RUNNER_MAX_SENDING_NUMBERS) " +
				'with their jobs by state now (waiting, active, delayed; failed and completed as kept), whether paused, ' +
				'and how many live runner processes work each',
			success: [200, '{ queues: [{ name, waiting, active, delayed, failed, completed, paused, runners }] }'],
			answer: z.object({ queues: z.array(queueDepth) }),
		},
		async () => ({ queues: await queueDepths(context) }),
	);
	campaignRoutes(routes, context);
	reindexRoutes(routes, context);
	suppressionRoutes(routes, context);
	budgetRoutes(routes, context);
	webhookRoutes(routes, context);
	receiptRoutes(routes, context);
	eventRoutes(routes, context);
	const metrics = new RunnerMetrics(context);
	routes.add(
		{
			method: 'GET',
			url: '/metrics',
			operationId: 'metrics',
			tag: 'runner',
			summary: 'Prometheus text: BullMQ queues and the runner',
			produces: ['text/plain'],
			success: [200, 'metrics'],
		},
		async ({ reply }) => {
			reply.type(metrics.contentType);
			return metrics.text();
		},
	);
	routes.add(
		{
			method: 'GET',
			url: '/openapi.json',
			operationId: 'openApi',
			tag: 'runner',
			summary: 'This API, generated from the route schemas',
			success: [200, 'OpenAPI 3.1'],
			answer: z.record(z.string(), z.unknown()),
		},
		async () => routes.openApi(API_TITLE, API_VERSION),
	);
}

/**
 * The OpenAPI document GET /openapi.json serves, without a server: the routes are declared, never
 * registered, so `context` is only held by handlers that are never called.
 */
export function openApiDocument(context: RunnerContext): Record<string, unknown> {
	const routes = new RouteTable();
	declareRoutes(routes, context, { workersRunning: () => false });
	return routes.openApi(API_TITLE, API_VERSION);
}

/** A flood of refused connections is logged once a minute at most. */
const DROPS_LOGGED_EVERY_MS = 60_000;

/**
 * Each open connection holds a socket and its parser's memory: past `max` Node closes a new one as
 * it arrives (before any byte is read), and the process keeps serving those it has.
 */
function capConnections(app: FastifyInstance, max: number, log: RunnerContext['log']): void {
	app.server.maxConnections = max;
	let dropped = 0;
	let quietUntil = 0;
	app.server.on('drop', () => {
		dropped++;
		if (Date.now() < quietUntil) return;
		log.warn({ dropped, max }, `new connections closed as they arrived: ${max} are open (RUNNER_MAX_CONNECTIONS)`);
		dropped = 0;
		quietUntil = Date.now() + DROPS_LOGGED_EVERY_MS;
	});
}

/** How long the rest of a refused body is read and thrown away before the connection is cut. */
const LINGER_MS = 5000;

/**
 * After a 413 Node reads the unread rest of the body and drops it (no memory held), so the client
 * sees the answer; a client that keeps sending past LINGER_MS is cut off.
 */
function lingerAfterRefusal(request: FastifyRequest): void {
	const raw = request.raw;
	if (raw.complete) return;
	raw.resume();
	const timer = setTimeout(() => raw.socket?.destroy(), LINGER_MS).unref();
	raw.once('end', () => clearTimeout(timer));
	raw.once('close', () => clearTimeout(timer));
}

/** bull-board at /admin/queues behind the same sign-in; send queues read-only (a retry there could send twice). */
function mountBoard(app: FastifyInstance, context: RunnerContext): void {
	const serverAdapter = new FastifyAdapter();
	serverAdapter.setBasePath('/admin/queues');
	const adapters = async () =>
		(await runnerQueues(context)).map(
			(queue) =>
				new BullMQAdapter(queue, { readOnlyMode: true, allowRetries: false, displayName: shownQueueName(queue.name) }),
		);
	// A link back to the console in the board's header (it has no other way back).
	const board = createBullBoard({
		queues: [],
		serverAdapter,
		options: { uiConfig: { boardTitle: 'Convo runner queues', miscLinks: [{ text: '← Console', url: '/' }] } },
	});
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
