/**
 * The operator console: a sign-in page (the token, posted once, becomes an HttpOnly SameSite=Strict
 * session cookie) and a single page that polls the API every 2 s. Everything is served from this
 * process (uPlot from node_modules), so it works on a machine with no network.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { type Auth, SESSION_COOKIE, type SecretKind } from './auth';

/** What the sign-in shares with the API's guard (server.ts): the Secure rule, failure logging and throttling. */
export interface SignIn {
	/** RUNNER_PUBLIC_URL is https: the cookie is Secure whatever the request came over. */
	publicHttps: boolean;
	wrongSecret(
		request: FastifyRequest,
		reply: FastifyReply,
		kind: SecretKind,
		reason: string,
		answer: () => FastifyReply,
	): Promise<FastifyReply>;
}

const here = join(__dirname, 'console');
const read = (path: string) => readFileSync(path, 'utf8');
/**
 * The console's scripts, one per view plus the helpers they share and the router (index.html loads them in this order).
 */
const SCRIPTS = [
	'shared.js',
	'list.js',
	'create.js',
	'campaign.js',
	'schedules.js',
	'suppressions.js',
	'cap.js',
	'budget.js',
	'webhooks.js',
	'reindex.js',
	'runners.js',
	'app.js',
];
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function consoleRoutes(app: FastifyInstance, auth: Auth, signIn: SignIn): void {
	const files = {
		login: read(join(here, 'login.html')),
		index: read(join(here, 'index.html')),
		css: read(join(here, 'app.css')),
		uplotJs: read(require.resolve('uplot/dist/uPlot.iife.min.js')),
		uplotCss: read(require.resolve('uplot/dist/uPlot.min.css')),
	};
	const loginPage = (message: string) =>
		files.login.replace(
			'<!--message-->',
			message ? `<p class="error" data-testid="sign-in-error">${escapeHtml(message)}</p>` : '',
		);

	app.get('/login', async (_request, reply) => reply.type('text/html; charset=utf-8').send(loginPage('')));
	app.post('/session', async (request, reply) => {
		const token = String((request.body as Record<string, unknown> | undefined)?.token ?? '');
		if (!auth.tokenOk(token)) {
			return signIn.wrongSecret(request, reply, 'token', 'wrong token at sign-in', () =>
				reply
					.code(401)
					.type('text/html; charset=utf-8')
					.send(loginPage('That token is not the runner token (RUNNER_TOKEN).')),
			);
		}
		const session = await auth.newSession();
		// Secure when the browser reached us over https: directly, through the proxy RUNNER_TRUST_PROXY
		// names, or as RUNNER_PUBLIC_URL says.
		reply.setCookie(SESSION_COOKIE, session.value, {
			httpOnly: true,
			sameSite: 'strict',
			path: '/',
			maxAge: session.maxAgeSeconds,
			secure: signIn.publicHttps || request.protocol === 'https',
		});
		return reply.redirect('/', 303);
	});
	app.post('/session/logout', async (request, reply) => {
		await auth.revoke(request.cookies[SESSION_COOKIE]);
		reply.clearCookie(SESSION_COOKIE, {
			path: '/',
			httpOnly: true,
			sameSite: 'strict',
			secure: signIn.publicHttps || request.protocol === 'https',
		});
		return reply.redirect('/login', 303);
	});
	app.get('/', async (request, reply) => {
		const session = request.cookies[SESSION_COOKIE] ?? '';
		const csrf = (await auth.sessionOk(session)) ? auth.csrfFor(session) : '';
		return reply.type('text/html; charset=utf-8').send(files.index.replace('{{csrf}}', csrf));
	});
	for (const name of SCRIPTS) {
		const text = read(join(here, name));
		app.get(`/console/${name}`, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(text));
	}
	app.get('/console/app.css', async (_request, reply) => reply.type('text/css; charset=utf-8').send(files.css));
	app.get('/assets/uplot.js', async (_request, reply) =>
		reply.type('text/javascript; charset=utf-8').send(files.uplotJs),
	);
	app.get('/assets/uplot.css', async (_request, reply) => reply.type('text/css; charset=utf-8').send(files.uplotCss));
}
