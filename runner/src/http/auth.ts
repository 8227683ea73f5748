/**
 * Who may use the control API and the console: a bearer token (`RUNNER_TOKEN`), compared in
 * constant time, or a signed session cookie (HttpOnly, SameSite=Strict) that the console gets by
 * signing in with that token. The token never travels in a URL or sits in local storage.
 * State-changing calls made with the cookie also need the session's CSRF token in a header.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'convo_session';
export const CSRF_HEADER = 'x-csrf-token';
const SESSION_HOURS = 12;

const digest = (text: string) => createHmac('sha256', 'compare').update(text).digest();

/** Equal-length digests, so neither the length nor the first differing byte leaks through timing. */
export function sameSecret(given: string, expected: string): boolean {
	return timingSafeEqual(digest(given), digest(expected));
}

export class Auth {
	readonly #token: string;
	readonly #key: Buffer;

	constructor(token: string) {
		this.#token = token;
		// Sessions are signed with a key derived from the token: every process with the same token accepts them.
		this.#key = createHmac('sha256', token).update('convo-runner session key').digest();
	}

	bearerOk(header: string | undefined): boolean {
		const match = /^Bearer (.+)$/.exec(header ?? '');
		return match !== null && sameSecret(match[1], this.#token);
	}

	tokenOk(token: string): boolean {
		return sameSecret(token, this.#token);
	}

	private sign(text: string): string {
		return createHmac('sha256', this.#key).update(text).digest('base64url');
	}

	newSession(): { value: string; maxAgeSeconds: number } {
		const expires = Date.now() + SESSION_HOURS * 3_600_000;
		const payload = `${expires}.${randomBytes(9).toString('base64url')}`;
		return { value: `${payload}.${this.sign(payload)}`, maxAgeSeconds: SESSION_HOURS * 3600 };
	}

	sessionOk(value: string | undefined): boolean {
		if (!value) return false;
		const cut = value.lastIndexOf('.');
		if (cut < 0) return false;
		const payload = value.slice(0, cut);
		if (!sameSecret(value.slice(cut + 1), this.sign(payload))) return false;
		return Number(payload.split('.')[0]) > Date.now();
	}

	csrfFor(session: string): string {
		return this.sign(`csrf:${session}`);
	}
}
