/**
 * Fault injection for the API routes: latency, an error rate with a status, 429 with Retry-After,
 * dropped connections (after the request was read) and a requests-per-second limit, set per
 * endpoint ("POST /v1/messages/send") or globally. An endpoint's faults replace the global ones.
 */
import { z } from 'zod/v4';

export const faultInput = z.strictObject({
	endpoint: z
		.string()
		.regex(/^(GET|POST|PATCH|PUT|DELETE) \/\S*$/, { error: 'must look like "POST /v1/messages/send"' })
		.optional(),
	latencyMs: z.int().min(0).max(60_000).optional(),
	errorRate: z.number().min(0).max(1).optional(),
	errorStatus: z.union([z.literal(500), z.literal(503)]).optional(),
	/** 429 with Retry-After: on every request, or on the given share of them (`rate`, 0 to 1). */
	rateLimit: z
		.strictObject({ retryAfterSeconds: z.int().min(0).max(3600), rate: z.number().min(0).max(1).optional() })
		.optional(),
	dropConnection: z.boolean().optional(),
	maxRequestsPerSecond: z.int().min(1).optional(),
});
type FaultInput = z.infer<typeof faultInput>;

interface FaultState extends Omit<FaultInput, 'endpoint'> {
	/** Error-rate accumulator: failing every 1/rate-th request keeps runs reproducible. */
	errorCredit: number;
	/** The same for a share of 429s. */
	rateLimitCredit: number;
	/** Request times within the last second, for maxRequestsPerSecond. */
	recent: number[];
}

type FaultDecision =
	| { kind: 'pass'; latencyMs: number }
	| { kind: 'error'; latencyMs: number; status: number }
	| { kind: 'rateLimited'; latencyMs: number; retryAfterSeconds: number }
	| { kind: 'drop'; latencyMs: number };

const GLOBAL = '*';

export class Faults {
	private byEndpoint = new Map<string, FaultState>();

	set(input: FaultInput): void {
		const { endpoint, ...rest } = input;
		this.byEndpoint.set(endpoint ?? GLOBAL, { ...rest, errorCredit: 0, rateLimitCredit: 0, recent: [] });
	}

	clear(endpoint?: string): void {
		if (endpoint === undefined) this.byEndpoint.clear();
		else this.byEndpoint.delete(endpoint);
	}

	list(): Record<string, Omit<FaultState, 'errorCredit' | 'rateLimitCredit' | 'recent'>> {
		const out: Record<string, Omit<FaultState, 'errorCredit' | 'rateLimitCredit' | 'recent'>> = {};
		for (const [endpoint, { errorCredit: _credit, rateLimitCredit: _limitCredit, recent: _recent, ...rest }] of this
			.byEndpoint)
			out[endpoint] = rest;
		return out;
	}

	get active(): boolean {
		return this.byEndpoint.size > 0;
	}

	/** What happens to one request of `endpoint` ("METHOD /route/template"). */
	decide(endpoint: string): FaultDecision {
		const state = this.byEndpoint.get(endpoint) ?? this.byEndpoint.get(GLOBAL);
		if (!state) return { kind: 'pass', latencyMs: 0 };
		const latencyMs = state.latencyMs ?? 0;
		if (state.maxRequestsPerSecond !== undefined) {
			const now = Date.now();
			state.recent = state.recent.filter((at) => now - at < 1000);
			if (state.recent.length >= state.maxRequestsPerSecond)
				return { kind: 'rateLimited', latencyMs, retryAfterSeconds: 1 };
			state.recent.push(now);
		}
		if (state.rateLimit) {
			const { rate = 1, retryAfterSeconds } = state.rateLimit;
			state.rateLimitCredit += rate;
			if (state.rateLimitCredit >= 1 - 1e-9) {
				state.rateLimitCredit -= 1;
				return { kind: 'rateLimited', latencyMs, retryAfterSeconds };
			}
		}
		if (state.dropConnection) return { kind: 'drop', latencyMs };
		if (state.errorRate !== undefined && state.errorRate > 0) {
			state.errorCredit += state.errorRate;
			if (state.errorCredit >= 1 - 1e-9) {
				state.errorCredit -= 1;
				return { kind: 'error', latencyMs, status: state.errorStatus ?? 500 };
			}
		}
		return { kind: 'pass', latencyMs };
	}
}
