/**
 * Who may use the control API and the console: a bearer token (`RUNNER_TOKEN`), compared in
 * constant time, or a session cookie (HttpOnly, SameSite=Strict) that the console gets by signing
 * in with that token. The token never travels in a URL or sits in local storage.
 * State-changing calls made with the cookie also need the session's CSRF token in a header.
 *
 * Sessions live in Redis (under the hash of their id, never the id), so signing out ends one on
 * every process at once. Wrong secrets are counted per client address and per kind of secret (the
 * token, the events header) in Redis, shared by every process: past RUNNER_AUTH_FAILURE_LIMIT in
 * RUNNER_AUTH_FAILURE_PERIOD that address's wrong secrets of that kind get 429 for what remains of
 * the period. The right secret is always let in: one misconfigured client behind a shared address
 * (a proxy, NAT, n8n's container) must not lock out the others.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import type { RunnerContext } from '../context';
// The one store a client keeps for itself (eslint.config.mjs lets this file alone import redis.ts):
// sessions and failed-token counts belong to the HTTP client, no other client has them.
import { redisScript } from '../redisScripts';

export const SESSION_COOKIE = 'convo_session';
export const CSRF_HEADER = 'x-csrf-token';
const SESSION_HOURS = 12;

/**
 * The secrets counted apart: `token` (a bearer token, the sign-in form's token) and `events` (the
 * events endpoint's header), so a client sending one wrong never holds up the other's failures.
 */
export type SecretKind = 'token' | 'events';

/** Wrong secrets of one kind one client address may send per period before its wrong ones get 429. */
export interface FailureLimit {
	max: number;
	periodMs: number;
}

const digest = (text: string) => createHmac('sha256', 'compare').update(text).digest();

/** Equal-length digests, so neither the length nor the first differing byte leaks through timing. */
function sameSecret(given: string, expected: string): boolean {
	return timingSafeEqual(digest(given), digest(expected));
}

export class Auth {
	readonly #token: string;
	readonly #key: Buffer;
	readonly #count: (keys: string[], args: Array<string | number>) => Promise<unknown>;
	readonly #waitLeft: (keys: string[], args: Array<string | number>) => Promise<unknown>;

	constructor(
		token: string,
		private readonly redis: RunnerContext['redis'],
		private readonly keys: RunnerContext['keys'],
		private readonly limit: FailureLimit,
	) {
		this.#token = token;
		// Cookies are signed with a key derived from the token: a forged one is refused without asking Redis.
		this.#key = createHmac('sha256', token).update('convo-runner session key').digest();
		this.#count = redisScript(redis, 'countAuthFailure');
		this.#waitLeft = redisScript(redis, 'authWaitLeft');
	}

	tokenOk(token: string): boolean {
		return sameSecret(token, this.#token);
	}

	/**
	 * Milliseconds the address's wrong secrets of `kind` are answered
	 * 429 for (0: none); asked only once a secret was found wrong.
	 */
	async throttled(kind: SecretKind, address: string): Promise<number> {
		return Number(await this.#waitLeft([this.keys.authFailures(kind, address)], [this.limit.max]));
	}

	async failed(kind: SecretKind, address: string): Promise<number> {
		return Number(await this.#count([this.keys.authFailures(kind, address)], [this.limit.periodMs]));
	}

	private sign(text: string): string {
		return createHmac('sha256', this.#key).update(text).digest('base64url');
	}

	private sessionKey(id: string): string {
		return this.keys.session(createHash('sha256').update(id).digest('hex'));
	}

	/** The id of a well-signed cookie value, else undefined. */
	private idOf(value: string | undefined): string | undefined {
		if (!value) return undefined;
		const cut = value.lastIndexOf('.');
		if (cut < 0) return undefined;
		const id = value.slice(0, cut);
		return sameSecret(value.slice(cut + 1), this.sign(id)) ? id : undefined;
	}

	async newSession(): Promise<{ value: string; maxAgeSeconds: number }> {
		const id = randomBytes(24).toString('base64url');
		await this.redis.set(this.sessionKey(id), '1', 'PX', SESSION_HOURS * 3_600_000);
		return { value: `${id}.${this.sign(id)}`, maxAgeSeconds: SESSION_HOURS * 3600 };
	}

	async sessionOk(value: string | undefined): Promise<boolean> {
		const id = this.idOf(value);
		return id !== undefined && (await this.redis.exists(this.sessionKey(id))) === 1;
	}

	/** Ends the session on every process: its cookie is refused from now on. */
	async revoke(value: string | undefined): Promise<void> {
		const id = this.idOf(value);
		if (id !== undefined) await this.redis.del(this.sessionKey(id));
	}

	csrfFor(session: string): string {
		return this.sign(`csrf:${session}`);
	}

	/**
	 * Whether `given` (the request's CSRF header) is the session's token, compared in constant time whatever its length.
	 */
	csrfOk(session: string, given: unknown): boolean {
		return typeof given === 'string' && sameSecret(given, this.csrfFor(session));
	}
}
