/**
 * The URLs the runner is given (a reindex `source`, a campaign's `source_url`, a webhook `url`)
 * against real `convo-runner start` processes, their Redis and the sandbox, with servers of the
 * test's own on loopback that count every request they get (issue 17, items 2 and 5).
 *
 * With default settings nothing on loopback, link-local or the unspecified address is reached, in
 * any spelling, and the answer for an open port is the answer for a closed one. With the operator's
 * opt-in (RUNNER_ALLOW_PRIVATE_URLS) an allowed feed works, a redirect to a port it does not allow
 * is refused, and a feed's credentials and query string go to the feed only: Basic auth, checked
 * by the feed server, and nowhere in answers, reports, Redis, the logs or the events.
 */
import { createServer as createTcpServer } from 'node:net';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { RunnerEvent } from 'convo-contract';
import {
	collectionOf,
	feedText,
	freshCollection,
	products,
	range,
	sandboxCounts,
	clearSandboxCounts,
	UPSERT,
} from './reindexSupport';
import { loadConfig } from '../../runner/src/config';
import { Outbound } from '../../runner/src/net/outbound';
import { freePort } from '../../runner/src/devRedis';
import {
	dumpKeys,
	positionalTemplate,
	runCli,
	startApi,
	templateSends,
	uniquePrefix,
	useRunnerUnderTest,
	waitFor,
} from './support';

jest.setTimeout(240_000);

const TOKEN = 'test-token-urls-0123456789';
// Default settings: the opt-in that support.ts gives every other test is taken away here.
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_ALLOW_PRIVATE_URLS: undefined });

const NOT_ALLOWED =
	'the address is not allowed: only public addresses are reached (loopback, private, link-local and special ones are refused unless the operator allows them in RUNNER_ALLOW_PRIVATE_URLS)';

interface Counting {
	port: number;
	requests: Array<{ url: string; authorization?: string }>;
	close(): Promise<void>;
}

/** An HTTP server of the test's own on every loopback address (127.0.0.1 and ::1); it counts each request. */
async function countingServer(
	handle: (request: IncomingMessage, response: ServerResponse) => void,
	host = '::',
): Promise<Counting> {
	const requests: Counting['requests'] = [];
	const server = createServer((request, response) => {
		requests.push({ url: String(request.url), authorization: request.headers.authorization });
		handle(request, response);
	});
	await new Promise<void>((resolve) => server.listen(0, host, resolve));
	return {
		port: (server.address() as AddressInfo).port,
		requests,
		// The runner keeps connections alive: close them, or close() waits for their idle timeout.
		close: () => new Promise((resolve) => server.close(() => resolve()).closeAllConnections()),
	};
}

const servers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
	await Promise.all(servers.map((server) => server.close()));
});

const phones = (n: number, seed: number) =>
	Array.from({ length: n }, (_, i) => `4917${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`);
const recipientsCsv = (list: string[]) => `phone,1,2\n${list.map((phone) => `${phone},Ada,A-1`).join('\n')}\n`;

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; text: string; json: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any

function caller(base: string): Call {
	return async (method, path, body) => {
		const response = await fetch(`${base}${path}`, {
			method,
			headers: {
				authorization: `Bearer ${TOKEN}`,
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		const json = (response.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : undefined;
		return { status: response.status, text, json };
	};
}

const settings = () => ({ template_id: positionalTemplate(runner.business).id, from: runner.business.phoneNumbers[0] });

/** The three ways a URL comes in, each answered as the API answers it. */
async function tryEverywhere(call: Call, origin: string) {
	const reindex = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		source: `${origin}/feed.ndjson`,
		id_field: 'sku',
	});
	const campaign = await call('POST', '/api/campaigns', { ...settings(), source_url: `${origin}/recipients.csv` });
	const webhook = await call('POST', '/api/webhooks', { url: `${origin}/hook`, events: ['campaign.finished'] });
	return { reindex, campaign, webhook };
}

test('default settings: loopback, unspecified and link-local URLs in every spelling are refused before anything is stored, nothing reaches them, and an open port answers like a closed one', async () => {
	const base = await startApi(runner);
	const call = caller(base);
	const target = await countingServer((_request, response) => response.end(feedText(products(range(0, 3)), 'ndjson')));
	servers.push(target);
	const closed = await freePort();
	const origins = [
		`http://127.0.0.1:${target.port}`,
		`http://[::1]:${target.port}`,
		`http://0.0.0.0:${target.port}`,
		`http://2130706433:${target.port}`,
		`http://0x7f.1:${target.port}`,
		`http://[::ffff:127.0.0.1]:${target.port}`,
		`http://localhost:${target.port}`,
		'http://169.254.169.254',
	];
	const answers: Record<string, Awaited<ReturnType<typeof tryEverywhere>>> = {};
	for (const origin of origins) answers[origin] = await tryEverywhere(call, origin);
	const closedAnswers = await tryEverywhere(call, `http://127.0.0.1:${closed}`);

	for (const [origin, { reindex, campaign, webhook }] of Object.entries(answers)) {
		expect({ origin, status: reindex.status, message: reindex.json.message }).toEqual({
			origin,
			status: 400,
			message: `source: ${NOT_ALLOWED}`,
		});
		expect({ origin, status: campaign.status, message: campaign.json.message }).toEqual({
			origin,
			status: 400,
			message: `source_url: ${NOT_ALLOWED}`,
		});
		expect({ origin, status: webhook.status, message: webhook.json.message }).toEqual({
			origin,
			status: 400,
			message: `url: ${NOT_ALLOWED}`,
		});
	}
	// An open port and a closed one: the same status and the same bytes.
	const open = answers[`http://127.0.0.1:${target.port}`];
	for (const kind of ['reindex', 'campaign', 'webhook'] as const)
		expect({ kind, status: closedAnswers[kind].status, text: closedAnswers[kind].text }).toEqual({
			kind,
			status: open[kind].status,
			text: open[kind].text,
		});

	// Nothing was stored, nothing reached the server, over a moment in which a queued run would have read it.
	await new Promise((resolve) => setTimeout(resolve, 1500));
	expect(target.requests).toEqual([]);
	expect((await call('GET', '/api/reindex')).json.runs).toEqual([]);
	expect((await call('GET', '/api/campaigns')).json.total).toBe(0);
	expect((await call('GET', '/api/webhooks')).status).toBe(200);
	expect(JSON.stringify((await call('GET', '/api/webhooks')).json)).not.toContain('127.0.0.1');
});

/** A second `start` on a prefix of its own, with the operator's opt-in set to `allow`. */
async function optedIn(allow: string) {
	const prefix = uniquePrefix();
	const base = await startApi(runner, { RUNNER_PREFIX: prefix, RUNNER_ALLOW_PRIVATE_URLS: allow });
	return { prefix, call: caller(base), process: runner.processes[runner.processes.length - 1] };
}

async function settledRun(call: Call, id: string) {
	return waitFor(
		`reindex run ${id} to settle`,
		async () => {
			const status = await call('GET', `/api/reindex/${id}`);
			return ['completed', 'failed', 'skipped'].includes(status.json.state) ? status.json : undefined;
		},
		60_000,
	);
}

test('opt-in: an allowed loopback feed is read (the sandbox counts the upserts); its redirect to a port not allowed is refused and never reached; a closed port and a port that does not speak HTTP read alike', async () => {
	const target = await countingServer(
		(_request, response) => response.end(feedText(products(range(0, 4)), 'ndjson')),
		'127.0.0.1',
	);
	const redirector = await countingServer((request, response) => {
		if (request.url?.startsWith('/away'))
			response.writeHead(302, { location: `http://127.0.0.1:${target.port}/feed.ndjson` }).end();
		else
			response.end(
				request.url?.endsWith('.csv') ? recipientsCsv(phones(3, 801)) : feedText(products(range(0, 5)), 'ndjson'),
			);
	}, '127.0.0.1');
	const sockets = new Set<import('node:net').Socket>();
	const silent = createTcpServer((socket) => {
		sockets.add(socket.on('close', () => sockets.delete(socket)));
		socket.end('SSH-2.0-OpenSSH_9.6\r\n');
	});
	await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
	const silentPort = (silent.address() as AddressInfo).port;
	const closed = await freePort();
	servers.push(target, redirector, {
		close: () =>
			new Promise((resolve) => (silent.close(() => resolve()), sockets.forEach((socket) => socket.destroy()))),
	});
	const { call } = await optedIn(`127.0.0.1:${redirector.port},127.0.0.1:${silentPort},127.0.0.1:${closed}`);

	// The allowed feed works: 5 items reach the sandbox.
	await freshCollection(runner);
	await clearSandboxCounts(runner);
	const good = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		source: `http://127.0.0.1:${redirector.port}/feed.ndjson`,
		id_field: 'sku',
	});
	expect(good.status).toBe(201);
	expect(await settledRun(call, good.json.id)).toMatchObject({ state: 'completed', counts: { read: 5, created: 5 } });
	expect((await sandboxCounts(runner))(UPSERT)).toBe(5);

	// And a campaign from it: 3 sends at the sandbox.
	const sentBefore = (await templateSends(runner.sandbox)).length;
	const campaign = await call('POST', '/api/campaigns', {
		...settings(),
		source_url: `http://127.0.0.1:${redirector.port}/recipients.csv`,
	});
	expect(campaign.status).toBe(201);
	await waitFor('the 3 sends', async () => (await templateSends(runner.sandbox)).length - sentBefore >= 3, 60_000);

	// A redirect to a loopback port the opt-in does not name: refused at the connection, never reached.
	const away = await call('POST', '/api/reindex', {
		collection_id: collectionOf(runner),
		source: `http://127.0.0.1:${redirector.port}/away.ndjson`,
		id_field: 'sku',
	});
	expect(away.status).toBe(201);
	const failed = await settledRun(call, away.json.id);
	expect(failed).toMatchObject({ state: 'failed' });
	expect(failed.last_error).toBe(
		`the source could not be read to its end: cannot read http://127.0.0.1:${redirector.port}/away.ndjson: ${NOT_ALLOWED}`,
	);
	const awayCampaign = await call('POST', '/api/campaigns', {
		...settings(),
		source_url: `http://127.0.0.1:${redirector.port}/away.csv`,
	});
	expect(awayCampaign.status).toBe(400);
	expect(awayCampaign.json.message).toBe(
		`Nothing was created: cannot read http://127.0.0.1:${redirector.port}/away.csv: ${NOT_ALLOWED}`,
	);
	expect(target.requests).toEqual([]);
	expect(redirector.requests.filter((request) => request.url.startsWith('/away'))).toHaveLength(2);

	// Allowed, but a closed port and one that answers no HTTP: the same last_error but for the URL.
	const errors: string[] = [];
	for (const port of [closed, silentPort]) {
		const run = await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source: `http://127.0.0.1:${port}/feed.ndjson`,
			id_field: 'sku',
		});
		expect(run.status).toBe(201);
		const settled = await settledRun(call, run.json.id);
		expect(settled.state).toBe('failed');
		errors.push(String(settled.last_error).replace(`:${port}/`, ':PORT/'));
	}
	expect(errors[0]).toBe(errors[1]);
	expect(errors[0]).toBe(
		'the source could not be read to its end: cannot read http://127.0.0.1:PORT/feed.ndjson: it could not be read: no HTTP answer',
	);
});

test('a feed URL with credentials and a signed query is read with Basic auth, again by each firing of its schedule, and PASS or SIG appear in no answer, report, Redis key or value, log line, last_error or event', async () => {
	const USER = 'feeduser';
	const PASS = 'PASSw0rd-4f1e9c';
	const SIG = 'SIG-7d3b2a9e51';
	const expected = `Basic ${Buffer.from(`${USER}:${PASS}`).toString('base64')}`;
	const feed = await countingServer((request, response) => {
		if (request.headers.authorization !== expected || !request.url?.includes(`X-Amz-Signature=${SIG}`))
			return void response.writeHead(401).end();
		if (request.url.startsWith('/broken')) return void response.writeHead(500).end();
		response.end(
			request.url.startsWith('/recipients') ? recipientsCsv(phones(2, 802)) : feedText(products(range(0, 3)), 'ndjson'),
		);
	}, '127.0.0.1');
	const events: RunnerEvent[] = [];
	const receiver = await countingServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', () => {
			events.push(JSON.parse(body) as RunnerEvent);
			response.end();
		});
	}, '127.0.0.1');
	servers.push(feed, receiver);
	const { prefix, call, process: api } = await optedIn(`127.0.0.1:${feed.port},127.0.0.1:${receiver.port}`);
	const secretUrl = (path: string) =>
		`http://${USER}:${PASS}@127.0.0.1:${feed.port}${path}?X-Amz-Signature=${SIG}&X-Amz-Expires=300`;
	const answers: string[] = [];
	const keep = <T extends { text: string }>(answer: T) => (answers.push(answer.text), answer);

	expect(
		keep(
			await call('POST', '/api/webhooks', {
				url: `http://127.0.0.1:${receiver.port}/hook`,
				events: ['campaign.finished', 'reindex.finished'],
			}),
		).status,
	).toBe(201);

	await freshCollection(runner);
	const run = keep(
		await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source: secretUrl('/feed.ndjson'),
			id_field: 'sku',
		}),
	);
	expect(run.status).toBe(201);
	expect(await settledRun(call, run.json.id)).toMatchObject({ state: 'completed', counts: { read: 3, created: 3 } });
	const broken = keep(
		await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source: secretUrl('/broken.ndjson'),
			id_field: 'sku',
		}),
	);
	const brokenRun = await settledRun(call, broken.json.id);
	expect(brokenRun.last_error).toBe(
		`the source could not be read to its end: cannot read http://127.0.0.1:${feed.port}/broken.ndjson: it answered HTTP 500`,
	);

	const sentBefore = (await templateSends(runner.sandbox)).length;
	const campaign = keep(
		await call('POST', '/api/campaigns', { ...settings(), source_url: secretUrl('/recipients.csv') }),
	);
	expect(campaign.status).toBe(201);
	expect(campaign.json.accepted).toBe(2);
	await waitFor('the 2 sends', async () => (await templateSends(runner.sandbox)).length - sentBefore >= 2, 60_000);

	// Cron: the whole URL is kept (sealed) to be read again at each run.
	const schedule = keep(
		await call('POST', '/api/reindex', {
			collection_id: collectionOf(runner),
			source: secretUrl('/feed.ndjson'),
			id_field: 'sku',
			cron: '*/2 * * * * *',
		}),
	);
	expect(schedule.status).toBe(201);
	const cronRun = await waitFor(
		'a run of the schedule to complete',
		async () => {
			const list = keep(await call('GET', '/api/reindex'));
			return (list.json.runs as Array<{ id: string; state: string }>).find(
				(r) => r.id !== run.json.id && r.id !== broken.json.id && r.state === 'completed',
			);
		},
		30_000,
	);
	expect(keep(await call('DELETE', `/api/reindex/schedules/${schedule.json.schedule.id}`)).status).toBe(200);
	const campaignSchedule = keep(
		await call('POST', '/api/campaigns', {
			...settings(),
			source_url: secretUrl('/recipients.csv'),
			cron: '*/2 * * * * *',
		}),
	);
	expect(campaignSchedule.status).toBe(201);
	const scheduleId = campaignSchedule.json.schedule.id;
	// Named as a campaign's own settings are, times in ISO 8601; the URL shown without its query.
	const iso = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
	expect(campaignSchedule.json.schedule).toEqual({
		id: scheduleId,
		name: expect.any(String),
		cron: '*/2 * * * * *',
		tz: 'UTC',
		state: 'active',
		next_run_at: iso,
		template_id: settings().template_id,
		from: settings().from,
		agent_id: null,
		rate_limit: expect.any(Number),
		source: `http://127.0.0.1:${feed.port}/recipients.csv`,
		// Not given: each firing tells it from the source, as a campaign's create does.
		format: null,
		delimiter: null,
		transactional: false,
		when_capped: 'skip',
		created_at: iso,
		paused_at: null,
	});
	const cronCampaign = await waitFor(
		'a cron campaign run to complete',
		async () => {
			const list = keep(await call('GET', '/api/campaigns'));
			return (list.json.items as Array<{ id: string; state: string }>).find(
				(c) => c.id.startsWith(scheduleId) && c.state === 'completed',
			);
		},
		30_000,
	);
	expect(keep(await call('POST', `/api/campaigns/${scheduleId}/cancel`)).status).toBe(200);
	expect(keep(await call('GET', `/api/campaigns/${cronCampaign.id}`)).json.counts.sent).toBe(2);
	const readsWithAuth = feed.requests.filter(
		(request) => request.url.startsWith('/feed') && request.authorization === expected,
	).length;
	expect(readsWithAuth).toBeGreaterThanOrEqual(2);
	expect(feed.requests.filter((request) => request.url.startsWith('/recipients')).length).toBeGreaterThanOrEqual(2);
	expect(feed.requests.every((request) => request.authorization === expected)).toBe(true);

	await waitFor(
		'the finished events',
		async () =>
			events.filter((e) => e.type === 'reindex.finished').length >= 3 &&
			events.some((e) => e.type === 'campaign.finished'),
		60_000,
	);
	for (const path of [
		'/api/campaigns',
		`/api/campaigns/${campaign.json.id}`,
		`/api/campaigns/${campaign.json.id}/report`,
		`/api/campaigns/${campaign.json.id}/report?format=csv`,
		'/api/reindex',
		`/api/reindex/${run.json.id}`,
		`/api/reindex/${run.json.id}/report`,
		`/api/reindex/${broken.json.id}/report`,
		`/api/reindex/${cronRun.id}/report`,
	]) {
		const answer = keep(await call('GET', path));
		expect({ path, status: answer.status }).toEqual({ path, status: 200 });
	}
	// What is shown: origin and path.
	expect(JSON.parse(answers[answers.length - 1]).source).toBe(`http://127.0.0.1:${feed.port}/feed.ndjson`);
	expect((await call('GET', `/api/campaigns/${campaign.json.id}`)).json.source).toBe(
		`http://127.0.0.1:${feed.port}/recipients.csv`,
	);

	const places: Record<string, string> = {
		answers: answers.join('\n'),
		redis: await dumpKeys(runner.context.redis, prefix),
		log: api.output(),
		last_error: String(brokenRun.last_error),
		events: JSON.stringify(events),
	};
	const leaks = Object.entries(places).flatMap(([where, text]) =>
		[PASS, SIG, USER].filter((secret) => text.includes(secret)).map((secret) => `${where}: ${secret}`),
	);
	expect(leaks).toEqual([]);
	// The scan looked at something: the runs, the campaign and the outbox are there.
	expect(places.redis).toContain(run.json.id);
	expect(places.log).toContain('reindex run started');
});

test('a URL with credentials or a query is refused, naming the variable, where no key can seal it', async () => {
	const env = {
		...runner.env,
		RUNNER_TOKEN: undefined,
		RUNNER_WEBHOOK_KEY: undefined,
		RUNNER_ALLOW_PRIVATE_URLS: 'true',
	};
	const result = await runCli(
		[
			'reindex',
			'run',
			'--collection',
			collectionOf(runner),
			'--source',
			'http://user:PASSx@127.0.0.1:9/feed.ndjson?sig=SIGx',
			'--id-field',
			'sku',
			'--json',
		],
		env,
	);
	expect(result.code).toBe(1);
	expect(result.stdout + result.stderr).toContain(
		'--source holds credentials or a query string: RUNNER_WEBHOOK_KEY (or RUNNER_TOKEN) must be set',
	);
	expect(result.stdout + result.stderr).not.toContain('PASSx');
	expect(result.stdout + result.stderr).not.toContain('SIGx');
	// A campaign schedule keeps its source the same way (storedSource), so it is refused the same way.
	const campaign = await runCli(
		[
			'campaign',
			'create',
			'--template',
			settings().template_id,
			'--from',
			settings().from,
			'--recipients',
			'http://user:PASSx@127.0.0.1:9/recipients.csv?sig=SIGx',
			'--cron',
			'0 9 * * *',
			'--json',
		],
		env,
	);
	expect(campaign.code).toBe(1);
	expect(JSON.parse(campaign.stdout).error).toBe(
		'--recipients holds credentials or a query string: RUNNER_WEBHOOK_KEY (or RUNNER_TOKEN) must be set to keep a URL with credentials or a query string: the runner stores it sealed under a key derived from it',
	);
	expect(campaign.stdout + campaign.stderr).not.toMatch(/PASSx|SIGx/);
});

test('RUNNER_ALLOW_PRIVATE_URLS: a wrong entry stops the process naming the variable; `true` still leaves link-local and 0.0.0.0 out; a port given limits the entry to it', async () => {
	expect(() => loadConfig({ RUNNER_ALLOW_PRIVATE_URLS: 'n8n:5678, not a host!' })).toThrow(
		/RUNNER_ALLOW_PRIVATE_URLS must be true, false, or a comma list .*"not a host!"/,
	);
	expect(() => loadConfig({ RUNNER_ALLOW_PRIVATE_URLS: '10.0.0.0/8:80' })).toThrow(
		/RUNNER_ALLOW_PRIVATE_URLS .*a CIDR range takes no port/,
	);
	const anyPrivate = new Outbound(loadConfig({ RUNNER_ALLOW_PRIVATE_URLS: 'true' }).RUNNER_ALLOW_PRIVATE_URLS);
	await expect(anyPrivate.check('http://10.1.2.3/feed.csv')).resolves.toBeUndefined();
	await expect(anyPrivate.check('http://[::1]:8080/feed.csv')).resolves.toBeUndefined();
	for (const url of [
		'http://169.254.169.254/latest/meta-data/',
		'http://[fe80::1]/',
		'http://0.0.0.0:8080/',
		'http://[::]/',
		'http://224.0.0.1/',
	])
		await expect(anyPrivate.check(url)).rejects.toThrow(NOT_ALLOWED);
	const listed = new Outbound(
		loadConfig({
			RUNNER_ALLOW_PRIVATE_URLS: '127.0.0.1:5678, 10.20.0.0/16, 169.254.169.254',
		}).RUNNER_ALLOW_PRIVATE_URLS,
	);
	await expect(listed.check('http://127.0.0.1:5678/webhook')).resolves.toBeUndefined();
	await expect(listed.check('http://10.20.3.4/feed')).resolves.toBeUndefined();
	await expect(listed.check('http://169.254.169.254/')).resolves.toBeUndefined();
	for (const url of ['http://127.0.0.1:5679/webhook', 'http://127.0.0.1/', 'http://10.21.0.1/', 'http://[::1]:5678/'])
		await expect(listed.check(url)).rejects.toThrow(NOT_ALLOWED);
});
