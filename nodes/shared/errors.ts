import { APIS, type Operation } from './operations';

/**
 * The error body the sandbox answers with everywhere (the real service's shape is not shown;
 * docs/decisions.md). `field` names the field a validation error is about.
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

/** What a caller should do with a failed call. */
export type ErrorDisposition =
	/** Send again later without change: 5xx, connection refused before the request left. */
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

export interface ErrorExplanation {
	/** One line: what happened. */
	message: string;
	/** What to do about it. */
	description: string;
	disposition: ErrorDisposition;
}

interface ExplainContext {
	params?: Record<string, unknown>;
	/** Retry-After of a 429, in seconds. */
	retryAfterSeconds?: number;
}

function notFound(operation: Operation, params: Record<string, unknown>): string {
	if (operation.path.startsWith('/contacts/')) return `No contact with uuid ${String(params.uuid)}`;
	if (operation.path.startsWith('/agents/')) return `No agent with id ${String(params.agent_id)}`;
	if (operation.path.startsWith('/messages/status/')) return `No message with uuid ${String(params.uuid)}`;
	if (operation.path === '/conversations') return 'No contact or conversation matches the lookup';
	return 'Not found';
}

/**
 * Turns a service error into what the user needs to read: the message the service gave where it
 * is about their input (400), otherwise guidance written for the operation.
 */
export function explainServiceError(
	operation: Operation,
	status: number,
	body: unknown,
	context: ExplainContext = {},
): ErrorExplanation {
	const api = APIS[operation.api];
	const serviceSays = serviceErrorMessage(body);
	const disposition = errorDisposition(status);
	const params = context.params ?? {};
	const said = serviceSays ? ` The service said: ${serviceSays}` : '';
	switch (status) {
		case 400:
			return {
				message: `The service refused the request: ${serviceSays ?? 'validation failed'}`,
				description:
					operation.path === '/send-template'
						? 'Check the template variables, the phone numbers and the buttons; a send can also be blocked by the platform.'
						: 'Check the fields named in the message.',
				disposition,
			};
		case 401:
			return {
				message: `The ${api.secretName} was refused (401)`,
				description: `Check the ${api.secretName} in the ${api.credentialName} credential.${said}`,
				disposition,
			};
		case 403:
			return {
				message:
					operation.path === '/send-template'
						? 'This template, phone number or agent belongs to another business (403)'
						: operation.path.startsWith('/agents')
							? 'This agent belongs to another business (403)'
							: 'This resource belongs to another business (403)',
				description: `Use identifiers of the business that owns the ${api.secretName} in the ${api.credentialName} credential.${said}`,
				disposition,
			};
		case 404:
			return {
				message: `${notFound(operation, params)} (404)`,
				description: `Check the identifier; it must belong to the business of the ${api.credentialName} credential.${said}`,
				disposition,
			};
		case 409:
			return {
				message: 'Several contacts or conversations match (409)',
				description: 'Add the other lookup field (phone, or field key with field value) so that exactly one matches.',
				disposition,
			};
		case 429:
			return {
				message: 'The service is rate limiting requests (429)',
				description:
					context.retryAfterSeconds !== undefined
						? `Retry after ${context.retryAfterSeconds} seconds, or send fewer requests at once.`
						: 'Wait a moment, or send fewer requests at once.',
				disposition,
			};
		default:
			return {
				message: `The service answered ${status}${serviceSays ? `: ${serviceSays}` : ''}`,
				description: status >= 500 ? 'The service failed; try again later.' : 'Check the request.',
				disposition,
			};
	}
}
