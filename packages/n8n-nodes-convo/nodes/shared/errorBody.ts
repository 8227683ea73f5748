/**
 * The error body the sandbox answers with everywhere (the real service's shape is not shown;
 * docs/decisions/contract/error-body.md). `field` names the field a validation error is about.
 */
export interface ServiceErrorBody {
	status: number;
	code: string;
	message: string;
	field?: string;
}

export const ERROR_CODES: Readonly<Record<number, string>> = {
	400: 'validation_failed',
	401: 'unauthorized',
	403: 'forbidden',
	404: 'not_found',
	409: 'conflict',
	413: 'payload_too_large',
	415: 'unsupported_media_type',
	429: 'rate_limited',
	500: 'internal_error',
	502: 'bad_gateway',
	503: 'unavailable',
};

export function errorBody(status: number, message: string, field?: string, code?: string): ServiceErrorBody {
	const body: ServiceErrorBody = { status, code: code ?? ERROR_CODES[status] ?? `http_${status}`, message };
	if (field) body.field = field;
	return body;
}

/**
 * Whether an error answer carries the service's JSON error body: an object with the HTTP status
 * repeated in `status`, a `code` and a `message`. An answer without it came from something else
 * at that URL (another server, a proxy's page), not from the service.
 */
export function isServiceErrorBody(body: unknown, status: number): body is ServiceErrorBody {
	if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
	const record = body as Record<string, unknown>;
	return record.status === status && typeof record.code === 'string' && typeof record.message === 'string';
}

/** The human message of an error body of any shape: ours, `{ error: "..." }`, `{ detail }`, or text. */
export function serviceErrorMessage(body: unknown): string | undefined {
	if (typeof body === 'string') return body.trim() === '' ? undefined : body.trim().slice(0, 500);
	if (body === null || typeof body !== 'object') return undefined;
	const record = body as Record<string, unknown>;
	for (const key of ['message', 'error', 'detail', 'error_description']) {
		const value = record[key];
		if (typeof value === 'string' && value.trim() !== '') return value;
		if (value && typeof value === 'object') {
			const nested = serviceErrorMessage(value);
			if (nested) return nested;
		}
	}
	return undefined;
}
