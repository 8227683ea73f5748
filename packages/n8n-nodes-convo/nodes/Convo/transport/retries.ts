import type { IN8nHttpFullResponse } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { retryDelay, type RequestFailure, type RetryState } from '../../shared';

/** The system error code of a failed connection (ECONNREFUSED, ...), wherever n8n's wrapping put it. */
function connectionErrorCode(error: unknown): string | undefined {
	for (
		let current = error as { code?: unknown; cause?: unknown } | undefined, depth = 0;
		current && depth < 5;
		depth++
	) {
		if (typeof current.code === 'string' && /^E[A-Z_]+$/.test(current.code)) return current.code;
		current = current.cause as typeof current;
	}
	return undefined;
}

/**
 * The last try of a request: an answer (good, or a failure past retrying), or the error of a connection past retrying.
 */
export type LastTry = { kind: 'answer'; response: IN8nHttpFullResponse } | { kind: 'unreachable'; error: unknown };

/**
 * The retry loop of both transports (the service's and the runner's), on the contract's retry
 * policy (nodes/shared/retryPolicy.ts): `send` is tried again after a failure that proves
 * the request was not handled, and after a 429 as long as the service asks; `settled` tells which
 * statuses end the loop as they are (below 400, or what the caller handles itself). What the caller
 * tells its user about a failure stays with the caller.
 */
export async function sendWithRetries(
	send: () => Promise<IN8nHttpFullResponse>,
	settled: (statusCode: number) => boolean,
): Promise<LastTry> {
	const state: RetryState = { attempts: 0, rateLimited: 0, rateLimitWaitedMs: 0 };
	for (;;) {
		state.attempts++;
		let response: IN8nHttpFullResponse;
		try {
			response = await send();
		} catch (error) {
			const delay = retryDelay({ kind: 'connection', code: connectionErrorCode(error) }, state);
			if (delay === undefined) return { kind: 'unreachable', error };
			await sleep(delay);
			continue;
		}
		if (settled(response.statusCode)) return { kind: 'answer', response };
		const failure: RequestFailure = {
			kind: 'status',
			status: response.statusCode,
			retryAfter: response.headers?.['retry-after'],
		};
		if (response.statusCode === 429) {
			state.rateLimited++;
			// Waiting on a rate limit does not use up the tries kept for failures of the service.
			state.attempts--;
		}
		const delay = retryDelay(failure, state);
		if (delay === undefined) return { kind: 'answer', response };
		if (response.statusCode === 429) state.rateLimitWaitedMs += delay;
		await sleep(delay);
	}
}
