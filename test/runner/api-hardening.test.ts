// @serial: measures how fast a large body is refused (under 1 s) and the process's memory while it is
/**
 * The control API's front door against real `convo-runner start` processes sharing one Redis:
 * body limits (a 45 MB sign-in form refused at once, the process not growing), failed tokens
 * throttled per address and each logged without the token, the access log, sessions revoked at
 * sign-out on every process, the Secure cookie behind a declared TLS proxy only, the security
 * headers, HEAD /healthz. Logs are read from the processes' own stderr.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

import { runCli, startApiProcess, waitFor, useRunnerUnderTest, type SpawnedRunner } from './support';

jest.setTimeout(120_000);

const TOKEN = 'hardening-token-0123456789';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });

interface Api {
	base: string;
	process: SpawnedRunner;
}
let plain: Api;
let proxied: Api;
beforeAll(async () => {
	plain = await startApiProcess(runner);
	// As behind a reverse proxy on this machine that terminates TLS and sets X-Forwarded-For/-Proto.
	proxied = await startApiProcess(runner, { RUNNER_TRUST_PROXY: '127.0.0.1' });
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The child's resident set and its peak so far, from the kernel. */
function memoryOf(pid: number): { rss: number; peak: number } {
	const status = readFileSync(`/proc/${pid}/status`, 'utf8');
	const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]) * 1024;
	return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/**
 * Declares `size` bytes and writes them as fast as the server reads, over a plain socket as curl
 * would: the status line is read as soon as it comes; a server that closes mid-upload is the point.
 */
function postLarge(base: string, path: string, size: number, type: string): Promise<{ status: number; ms: number }> {
	const started = Date.now();
	const { hostname, port } = new URL(base);
	return new Promise((resolve, reject) => {
		const socket = connect(Number(port), hostname);
		let answer = '';
		socket.on('data', (data) => {
			answer += String(data);
			const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
			if (status) {
				resolve({ status: Number(status[1]), ms: Date.now() - started });
				socket.destroy();
			}
		});
		socket.on('error', () => undefined);
		socket.on('close', () => reject(new Error(`closed without an answer: ${answer}`)));
		socket.write(
			`POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: ${type}\r\ncontent-length: ${size}\r\n\r\n`,
		);
		const chunk = Buffer.alloc(1024 * 1024, 'a');
		let sent = 0;
		const write = () => {
			while (sent < size && !socket.destroyed) {
				const part = chunk.subarray(0, Math.min(chunk.length, size - sent));
				sent += part.length;
				if (!socket.write(part)) return void socket.once('drain', write);
			}
		};
		write();
	});
}

test('a 45 MB sign-in form is refused with 413 at once and the process does not grow; a 2 MB JSON body too; inline recipients keep the large limit', async () => {
	const pid = plain.process.child.pid as number;
	const before = memoryOf(pid);
	const form = await postLarge(plain.base, '/session', 45 * 1024 * 1024, 'application/x-www-form-urlencoded');
	expect(form.status).toBe(413);
	expect(form.ms).toBeLessThan(1000);
	const after = memoryOf(pid);
	expect(after.peak - before.peak).toBeLessThan(20 * 1024 * 1024);

	const json = await fetch(`${plain.base}/api/webhooks`, {
		method: 'POST',
		headers: { ...bearer(TOKEN), 'content-type': 'application/json' },
		body: JSON.stringify({
			url: 'http://127.0.0.1:9/x',
			events: ['campaign.finished'],
			description: 'x'.repeat(2 * 1024 * 1024),
		}),
	});
	expect(json.status).toBe(413);
	expect(await json.json()).toMatchObject({ status: 413 });

	// 3 MB of inline recipients (about 40,000 rows) is still read: 4xx for the settings, not 413 for the size.
	const rows = Array.from({ length: 40_000 }, (_, i) => ({
		phone: `+4917${String(i).padStart(8, '0')}`,
		1: 'Customer name',
		2: `order ${i}`,
	}));
	const inline = await fetch(`${plain.base}/api/campaigns`, {
		method: 'POST',
		headers: { ...bearer(TOKEN), 'content-type': 'application/json' },
		body: JSON.stringify({ template_id: 'not-a-uuid', from: '+491700000000', recipients: rows }),
	});
	expect(inline.status).toBe(400);
});

test('failed tokens: each logged with address, route and reason but never the token; past 30 from one address its wrong tokens get 429 with Retry-After, while the right token still gets in; others are not held up', async () => {
	const attacker = { 'x-forwarded-for': '203.0.113.7' };
	const guesses = Array.from({ length: 30 }, (_, i) => `guess-${i}-of-the-token-zq${i}x`);
	const statuses: number[] = [];
	for (const guess of guesses.slice(0, 29))
		statuses.push(
			(await fetch(`${proxied.base}/api/campaigns`, { headers: { ...attacker, ...bearer(guess) } })).status,
		);
	// The sign-in form counts toward the same limit.
	statuses.push(
		(
			await fetch(`${proxied.base}/session`, {
				method: 'POST',
				headers: { ...attacker, 'content-type': 'application/x-www-form-urlencoded' },
				body: `token=${guesses[29]}`,
			})
		).status,
	);
	expect(statuses).toEqual(Array(30).fill(401));

	const blocked = await fetch(`${proxied.base}/api/campaigns`, {
		headers: { ...attacker, ...bearer('guess-31-of-the-token-zq31x') },
	});
	expect(blocked.status).toBe(429);
	expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(60);
	expect(
		(
			await fetch(`${proxied.base}/session`, {
				method: 'POST',
				redirect: 'manual',
				headers: { ...attacker, 'content-type': 'application/x-www-form-urlencoded' },
				body: 'token=guess-32-of-the-token',
			})
		).status,
	).toBe(429);
	// The right token from the same address (another client behind the same proxy) still gets in, at the API and at sign-in.
	expect((await fetch(`${proxied.base}/api/campaigns`, { headers: { ...attacker, ...bearer(TOKEN) } })).status).toBe(
		200,
	);
	expect(
		(
			await fetch(`${proxied.base}/session`, {
				method: 'POST',
				redirect: 'manual',
				headers: { ...attacker, 'content-type': 'application/x-www-form-urlencoded' },
				body: `token=${TOKEN}`,
			})
		).status,
	).toBe(303);
	// Someone else's wrong token is not held up by this address's.
	expect(
		(
			await fetch(`${proxied.base}/api/campaigns`, {
				headers: { 'x-forwarded-for': '198.51.100.9', ...bearer('another-wrong-token-0123') },
			})
		).status,
	).toBe(401);
	expect(
		(await fetch(`${proxied.base}/api/campaigns`, { headers: { 'x-forwarded-for': '198.51.100.9', ...bearer(TOKEN) } }))
			.status,
	).toBe(200);

	const log = proxied.process.output();
	const failures = log
		.split('\n')
		.filter((line) => line.includes('"authentication failed"') && line.includes('203.0.113.7'));
	expect(failures).toHaveLength(30);
	expect(
		failures.filter(
			(line) => line.includes('"reason":"wrong bearer token"') && line.includes('"path":"/api/campaigns"'),
		),
	).toHaveLength(29);
	expect(
		failures.filter((line) => line.includes('"reason":"wrong token at sign-in"') && line.includes('"path":"/session"')),
	).toHaveLength(1);
	expect(log.split('\n').filter((line) => line.includes('authentication throttled')).length).toBeGreaterThanOrEqual(2);
	for (const secret of [...guesses, 'guess-31-of-the-token-zq31x', 'guess-32-of-the-token', TOKEN])
		expect(log).not.toContain(secret);
	expect(plain.process.output()).not.toContain(TOKEN);
});

test('an access log line per request: method, route, status, ms, auth kind; never the query string or headers', async () => {
	expect(
		(await fetch(`${plain.base}/api/campaigns?limit=5&marker=q-string-zz9`, { headers: bearer(TOKEN) })).status,
	).toBe(200);
	expect(
		(await fetch(`${plain.base}/api/campaigns/cnope?marker=q-string-zz9`, { headers: bearer(TOKEN) })).status,
	).toBe(404);
	expect((await fetch(`${plain.base}/api/campaigns`)).status).toBe(401);
	const lines = await waitFor(
		'the access log lines',
		async () => {
			const found = plain.process
				.output()
				.split('\n')
				.filter((line) => line.includes('"msg":"http"'));
			return found.some((line) => line.includes('"status":401')) ? found : undefined;
		},
		5000,
	);
	const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
	expect(entries).toEqual(
		expect.arrayContaining([
			expect.objectContaining({
				method: 'GET',
				route: '/api/campaigns',
				status: 200,
				auth: 'bearer',
				ms: expect.any(Number),
			}),
			expect.objectContaining({ method: 'GET', route: '/api/campaigns/:id', status: 404, auth: 'bearer' }),
			expect.objectContaining({ method: 'GET', route: '/api/campaigns', status: 401, auth: 'none' }),
		]),
	);
	expect(plain.process.output()).not.toContain('q-string-zz9');
	expect(plain.process.output()).not.toContain('authorization');
});

test('probes that succeed are not logged at info: an orchestrator polling /healthz and /readyz does not flood the log', async () => {
	// Only this test's lines: the start-up's own polling may have met a 503 (not ready yet), which is logged, rightly.
	const before = plain.process.output().length;
	for (let i = 0; i < 5; i++) {
		expect((await fetch(`${plain.base}/healthz`)).status).toBe(200);
		expect((await fetch(`${plain.base}/readyz`)).status).toBe(200);
	}
	// A request after the probes: once its line is there, the probes' would be too.
	expect((await fetch(`${plain.base}/api/campaigns?marker=after-probes`, { headers: bearer(TOKEN) })).status).toBe(200);
	const lines = await waitFor(
		'the access log line after the probes',
		async () => {
			const found = plain.process
				.output()
				.slice(before)
				.split('\n')
				.filter((line) => line.includes('"msg":"http"'));
			return found.length > 0 && found.at(-1)?.includes('"route":"/api/campaigns"') ? found : undefined;
		},
		5000,
	);
	expect(lines.filter((line) => /"route":"\/(healthz|readyz)"/.test(line))).toEqual([]);
});

async function signIn(api: Api, headers: Record<string, string> = {}): Promise<{ cookie: string; setCookie: string }> {
	const response = await fetch(`${api.base}/session`, {
		method: 'POST',
		redirect: 'manual',
		headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
		body: `token=${TOKEN}`,
	});
	expect(response.status).toBe(303);
	const setCookie = response.headers.get('set-cookie') ?? '';
	return { cookie: setCookie.split(';')[0], setCookie };
}

test('sign-out revokes the session on every process: the old cookie is refused afterwards', async () => {
	const { cookie } = await signIn(plain);
	expect((await fetch(`${plain.base}/api/campaigns`, { headers: { cookie } })).status).toBe(200);
	expect((await fetch(`${proxied.base}/api/campaigns`, { headers: { cookie } })).status).toBe(200);
	// A proxy's own Basic password, forwarded, does not get in the session's way.
	expect(
		(await fetch(`${plain.base}/api/campaigns`, { headers: { cookie, authorization: 'Basic dXNlcjpwYXNzd29yZA==' } }))
			.status,
	).toBe(200);
	const out = await fetch(`${plain.base}/session/logout`, {
		method: 'POST',
		redirect: 'manual',
		headers: { cookie, origin: plain.base },
	});
	expect(out.status).toBe(303);
	expect(out.headers.get('set-cookie')).toMatch(/convo_session=;/);
	expect((await fetch(`${plain.base}/api/campaigns`, { headers: { cookie } })).status).toBe(401);
	expect((await fetch(`${proxied.base}/api/campaigns`, { headers: { cookie } })).status).toBe(401);
	const page = await fetch(`${plain.base}/`, { redirect: 'manual', headers: { cookie, accept: 'text/html' } });
	expect([page.status, page.headers.get('location')]).toEqual([302, '/login']);
	// No session id is kept in Redis in the clear.
	const id = decodeURIComponent(cookie.split('=')[1]).split('.')[0];
	const keys = await runner.context.redis.keys(`${runner.env.RUNNER_PREFIX}*`);
	expect(keys.filter((key) => key.includes(id))).toEqual([]);
});

test('the cookie is Secure when a declared proxy says the request came over https, and not when an undeclared one says so', async () => {
	const tls = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'runner.example.com' };
	const behind = await signIn(proxied, tls);
	expect(behind.setCookie).toMatch(/; Secure/i);
	expect(behind.setCookie).toMatch(/; HttpOnly/i);
	expect(behind.setCookie).toMatch(/; SameSite=Strict/i);
	// The console's sign-out form, posted by the browser at the proxy's https origin, is accepted.
	const out = await fetch(`${proxied.base}/session/logout`, {
		method: 'POST',
		redirect: 'manual',
		headers: { ...tls, cookie: behind.cookie, origin: 'https://runner.example.com' },
	});
	expect(out.status).toBe(303);
	expect((await fetch(`${proxied.base}/api/campaigns`, { headers: { cookie: behind.cookie } })).status).toBe(401);

	const spoofed = await signIn(plain, tls);
	expect(spoofed.setCookie).not.toMatch(/secure/i);
});

test('security headers on every answer; no-store on the API, reports and pages', async () => {
	const answers = {
		login: await fetch(`${plain.base}/login`),
		api: await fetch(`${plain.base}/api/campaigns`, { headers: bearer(TOKEN) }),
		report: await fetch(`${plain.base}/api/campaigns/cnope/report?format=csv`, { headers: bearer(TOKEN) }),
		refused: await fetch(`${plain.base}/api/campaigns`),
		healthz: await fetch(`${plain.base}/healthz`),
		readyz: await fetch(`${plain.base}/readyz`),
	};
	for (const [name, response] of Object.entries(answers)) {
		const headers = Object.fromEntries(
			['content-security-policy', 'x-frame-options', 'x-content-type-options', 'cache-control'].map((header) => [
				header,
				response.headers.get(header),
			]),
		);
		expect({ name, ...headers }).toEqual({
			name,
			'content-security-policy': expect.stringContaining("script-src 'self'"),
			'x-frame-options': 'DENY',
			'x-content-type-options': 'nosniff',
			'cache-control': 'no-store',
		});
		expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
	}
	const script = await fetch(`${plain.base}/console/app.js`, { headers: bearer(TOKEN) });
	expect(script.status).toBe(200);
	expect(script.headers.get('x-content-type-options')).toBe('nosniff');
});

test('HEAD /healthz and HEAD /readyz answer like GET, without a token', async () => {
	for (const path of ['/healthz', '/readyz']) {
		const head = await fetch(`${plain.base}${path}`, { method: 'HEAD' });
		expect({ path, status: head.status, body: await head.text() }).toEqual({ path, status: 200, body: '' });
	}
});

test('RUNNER_PUBLIC_URL on https: the cookie is Secure without any proxy header, and that origin may post the console forms', async () => {
	const api = await startApiProcess(runner, { RUNNER_PUBLIC_URL: 'https://runner.example.com' });
	const session = await signIn(api);
	expect(session.setCookie).toMatch(/; Secure/i);
	const out = await fetch(`${api.base}/session/logout`, {
		method: 'POST',
		redirect: 'manual',
		headers: { cookie: session.cookie, origin: 'https://runner.example.com' },
	});
	expect(out.status).toBe(303);
	expect((await fetch(`${api.base}/api/campaigns`, { headers: { cookie: session.cookie } })).status).toBe(401);
	await api.process.kill('SIGTERM');
});

test('a RUNNER_TRUST_PROXY that is not addresses is refused at start, naming the variable', async () => {
	const result = await runCli(
		['campaign', 'list', '--json'],
		{ ...runner.env, RUNNER_TRUST_PROXY: 'the-proxy.example.com' },
		30_000,
	);
	expect(result.code).toBe(1);
	expect(JSON.parse(result.stdout).error).toMatch(/RUNNER_TRUST_PROXY must be the proxy addresses or CIDR ranges/);
});
