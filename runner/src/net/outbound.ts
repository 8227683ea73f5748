/**
 * Every connection the runner opens to a URL it was given (a feed, a campaign's source_url, a
 * webhook receiver) goes through an undici Agent whose connector resolves the host, keeps only the
 * addresses the policy (policy.ts) allows and connects to one of them by its IP. The check is made
 * for each connection the Agent opens, so a redirect, a retry and a host whose DNS answer changes
 * between a check and the connection (rebinding) are all held to it; the address checked is the
 * address connected to.
 *
 * What a caller learns is deliberately coarse: an address refused, a host that does not resolve,
 * a closed port and a port that does not speak HTTP give the same texts, so the API is no probe of
 * the runner's network.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';

import { Agent, buildConnector, interceptors, request, type Dispatcher } from 'undici';

import type { RunnerConfig } from '../config';
import { UserError } from '../errors';
import { isHttpUrl } from './urls';
import { addressAllowed, type UrlPolicy } from './policy';

/** What a refused URL is told, whatever the reason (private address, unknown host). */
const NOT_ALLOWED =
	'the address is not allowed: only public addresses are reached (loopback, private, ' +
	'link-local and special ones are refused unless the operator allows them in RUNNER_ALLOW_PRIVATE_URLS)';
/** What a URL at an allowed address that gave no HTTP answer is told (refused, reset, timed out, not HTTP). */
const NO_ANSWER = 'it could not be read: no HTTP answer';

/** A feed follows at most this many redirects, each one checked like the first URL. */
const MAX_REDIRECTS = 3;
const LOOKUP_TIMEOUT_MS = 10_000;

/** A URL the policy refuses; its message is NOT_ALLOWED, the same for every reason. */
class UrlNotAllowed extends Error {
	readonly code = 'ERR_CONVO_URL_NOT_ALLOWED';
	constructor() {
		super(NOT_ALLOWED);
	}
}

export function isNotAllowed(error: unknown): boolean {
	return (error as { code?: string } | null)?.code === 'ERR_CONVO_URL_NOT_ALLOWED';
}

/** A URL's host without IPv6 brackets, and its port (the scheme's default when none). */
function endpoint(url: URL): { hostname: string; port: number } {
	const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
	return { hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
}

/** The addresses of `hostname` (itself when an IP); none when it does not resolve. */
async function addressesOf(hostname: string): Promise<string[]> {
	if (isIP(hostname)) return [hostname];
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<never>(
		(_, reject) => (timer = setTimeout(() => reject(new Error('lookup timed out')), LOOKUP_TIMEOUT_MS)),
	);
	try {
		return (await Promise.race([lookup(hostname, { all: true, verbatim: true }), timeout])).map(
			(found) => found.address,
		);
	} catch {
		return [];
	} finally {
		clearTimeout(timer);
	}
}

/** The addresses of `hostname` the policy allows on `port`; none when it does not resolve. */
async function allowedAddresses(policy: UrlPolicy, hostname: string, port: number): Promise<string[]> {
	return (await addressesOf(hostname)).filter((address) => addressAllowed(policy, hostname, port, address));
}

/** undici's connector, behind the check: it connects to an allowed address of the host, by IP. */
function guardedConnector(policy: UrlPolicy): buildConnector.connector {
	const connect = buildConnector({});
	return (options, callback) => {
		const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
		allowedAddresses(policy, options.hostname, port).then(
			([address]) => {
				if (address === undefined) callback(new UrlNotAllowed(), null);
				// TLS still verifies the certificate against the host name: the connector takes the
				// server name from `host`, which stays the URL's.
				else connect({ ...options, hostname: address }, callback);
			},
			(error: Error) => callback(error, null),
		);
	};
}

/** The guarded dispatchers of one policy: one without redirects (webhook deliveries), one for feeds. */
export class Outbound {
	readonly agent: Agent;
	readonly feeds: Dispatcher;

	constructor(readonly policy: UrlPolicy) {
		this.agent = new Agent({ connect: guardedConnector(policy) });
		this.feeds = this.agent.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTS }));
	}

	/**
	 * Refuses, before anything is stored, a URL whose host resolves to no address the policy
	 * allows. A name that does not resolve now is let through (a DNS hiccup must not refuse a
	 * receiver); the connection refuses it later, with the same text, if it still does not.
	 */
	async check(url: string): Promise<void> {
		const { hostname, port } = endpoint(new URL(url));
		const addresses = await addressesOf(hostname);
		if (addresses.length > 0 && !addresses.some((address) => addressAllowed(this.policy, hostname, port, address)))
			throw new UrlNotAllowed();
	}

	/**
	 * GET of a feed: userinfo goes as `Authorization: Basic` (undici drops it on a redirect to
	 * another origin). Throws UrlNotAllowed, or an Error whose message names no host, port or
	 * cause beyond NO_ANSWER or the HTTP status.
	 */
	async openFeed(url: string, timeoutMs: number): Promise<{ body: Readable; total?: number }> {
		const target = new URL(url);
		const headers: Record<string, string> = { 'user-agent': 'convo-runner' };
		if (target.username !== '' || target.password !== '') {
			const user = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
			headers.authorization = `Basic ${Buffer.from(user, 'utf8').toString('base64')}`;
			target.username = '';
			target.password = '';
		}
		let response;
		try {
			response = await request(target, {
				method: 'GET',
				headers,
				headersTimeout: timeoutMs,
				bodyTimeout: timeoutMs,
				dispatcher: this.feeds,
			});
		} catch (error) {
			throw isNotAllowed(error) ? new UrlNotAllowed() : new Error(NO_ANSWER);
		}
		if (response.statusCode !== 200) {
			await response.body.dump().catch(() => undefined);
			throw new Error(`it answered HTTP ${response.statusCode}`);
		}
		const length = Number(response.headers['content-length']);
		return { body: response.body, total: Number.isFinite(length) && length > 0 ? length : undefined };
	}
}

/**
 * A source URL (`name`: the setting as the client calls it) is checked against the policy before
 * anything is stored; the reading checks every connection again. A file path passes untouched.
 */
export async function checkUrlAllowed(config: RunnerConfig, source: string, name: string): Promise<void> {
	if (!isHttpUrl(source)) return;
	if (!URL.canParse(source)) throw new UserError(`${name} is not a valid http(s) URL`);
	try {
		await outboundFor(config).check(source);
	} catch (error) {
		throw isNotAllowed(error) ? new UserError(`${name}: ${(error as Error).message}`) : error;
	}
}

const byConfig = new WeakMap<RunnerConfig, Outbound>();

/** The Outbound of this configuration's policy (one Agent per process and configuration). */
export function outboundFor(config: RunnerConfig): Outbound {
	let outbound = byConfig.get(config);
	if (!outbound) {
		outbound = new Outbound(config.RUNNER_ALLOW_PRIVATE_URLS);
		byConfig.set(config, outbound);
	}
	return outbound;
}
