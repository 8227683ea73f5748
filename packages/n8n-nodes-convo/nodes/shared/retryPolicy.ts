import { OPERATIONS, type Operation } from './operations';

/** What a caller should do with a failed call. */
export type ErrorDisposition =
	/** Send again later without change: 5xx, 408, a connection refused before the request left. */
	| 'retry'
	/** The service asked to slow down (429): wait Retry-After, then send again. */
	| 'rate_limited'
	/** Sending the same again fails the same way: fix the input or the credential. */
	| 'permanent';

export function errorDisposition(status: number): ErrorDisposition {
	if (status === 429) return 'rate_limited';
	if (status >= 500 || status === 408) return 'retry';
	return 'permanent';
}

/**
 * Connection errors that prove the request never reached the service: nothing listened, or the
 * host name did not resolve. A reset or a timeout after the request was written proves nothing
 * (the service may have acted on it), so it is never retried blindly.
 */
const NOT_SENT_CONNECTION_ERRORS: ReadonlySet<string> = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
	// undici's connect-phase timeout: no connection, so no byte of the request left.
	'UND_ERR_CONNECT_TIMEOUT',
]);

export function connectionErrorDisposition(code: string | undefined): ErrorDisposition {
	return code !== undefined && NOT_SENT_CONNECTION_ERRORS.has(code) ? 'retry' : 'permanent';
}

/**
 * An exponential backoff, the one formula every retry of the node and the runner uses: `firstMs`
 * after the first failed try, twice as long after each next one, at most `maxMs`. `jitter` (0 to 1)
 * takes a random share of up to that much off each wait, so callers that failed together do not
 * all come back together.
 */
export interface Backoff {
	firstMs: number;
	maxMs?: number;
	jitter?: number;
}

/** The wait after failed try `attempt` (1 for the first). */
export function backoffMs(backoff: Backoff, attempt: number, random: () => number = Math.random): number {
	const full = Math.min(backoff.maxMs ?? Number.POSITIVE_INFINITY, backoff.firstMs * 2 ** (attempt - 1));
	return backoff.jitter ? Math.floor(full * (1 - backoff.jitter * random())) : full;
}

/** How long and how often one request is tried again (docs/decisions/contract/retries.md). */
export const RETRY_POLICY = {
	/** Tries of a request whose failure proves it was not handled (disposition `retry`). */
	maxAttempts: 3,
	/** Wait before try n+1 after a `retry` failure: 0.5 s, then 1 s. */
	retryDelayMs: (attempt: number) => backoffMs({ firstMs: 500 }, attempt),
	/** Longest a single Retry-After is honoured; a longer one fails the request at once. */
	maxRetryAfterMs: 30_000,
	/** Total wait on 429 answers for one request; past it the 429 fails the request. */
	maxRateLimitWaitMs: 60_000,
	/** Wait after the n-th 429 without Retry-After: 1 s, 2 s, 4 s, ... at most 16 s. */
	rateLimitBackoffMs: (rateLimitedBefore: number) => backoffMs({ firstMs: 1000, maxMs: 16_000 }, rateLimitedBefore + 1),
} as const;

/** Retry-After as seconds or an HTTP date, in milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(value: unknown, now = Date.now()): number | undefined {
	if (value === undefined || value === null || String(value).trim() === '') return undefined;
	const text = String(value).trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	const at = Date.parse(text);
	return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** What happened to one request so far. */
export interface RetryState {
	/** Tries made, the failed one included. */
	attempts: number;
	/** 429 answers so far, the current one included. */
	rateLimited: number;
	/** Time already spent waiting on 429 answers. */
	rateLimitWaitedMs: number;
}

export type RequestFailure =
	| { kind: 'status'; status: number; retryAfter?: unknown }
	| { kind: 'connection'; code?: string };

/** How long to wait before trying again, or undefined to give up and report the failure. */
export function retryDelay(failure: RequestFailure, state: RetryState): number | undefined {
	const disposition =
		failure.kind === 'status' ? errorDisposition(failure.status) : connectionErrorDisposition(failure.code);
	if (disposition === 'rate_limited' && failure.kind === 'status') {
		const asked = retryAfterMs(failure.retryAfter);
		if (asked !== undefined && asked > RETRY_POLICY.maxRetryAfterMs) return undefined;
		const wait = asked ?? RETRY_POLICY.rateLimitBackoffMs(state.rateLimited - 1);
		return state.rateLimitWaitedMs + wait <= RETRY_POLICY.maxRateLimitWaitMs ? wait : undefined;
	}
	if (disposition === 'retry' && state.attempts < RETRY_POLICY.maxAttempts)
		return RETRY_POLICY.retryDelayMs(state.attempts);
	return undefined;
}

/**
 * Operations whose effect happens again when they are sent again (a second message, a second
 * agent). Every other operation reads, upserts or sets state, so repeating it changes nothing.
 */
const REPEATS_ITS_EFFECT: ReadonlySet<Operation> = new Set<Operation>([
	OPERATIONS.sendMessage,
	OPERATIONS.sendTemplate,
	OPERATIONS.createAgent,
]);

export function repeatsItsEffect(operation: Operation): boolean {
	return REPEATS_ITS_EFFECT.has(operation);
}
