import { isServiceErrorBody, serviceErrorMessage } from './errorBody';
import { APIS, type Operation } from './operations';
import { errorDisposition, type ErrorDisposition } from './retryPolicy';

export interface ErrorExplanation {
	/** One line: what happened. */
	message: string;
	/** What to do about it. */
	description: string;
	disposition: ErrorDisposition;
}

export interface ExplainContext {
	params?: Record<string, unknown>;
	/** Retry-After of a 429, in seconds. */
	retryAfterSeconds?: number;
	/**
	 * The name the user knows an API field by (a node shows its field's label); the API field's
	 * own name when not given.
	 */
	labelOf?: (apiField: string) => string;
}

/** The label of the field that fills `apiField`, or the API field's name. */
function fieldReference(apiField: string, labelOf?: (apiField: string) => string): string {
	return labelOf?.(apiField) ?? apiField;
}

function notFound(
	operation: Operation,
	params: Record<string, unknown>,
	labelOf?: (apiField: string) => string,
): string {
	const missing = (what: string, field: string) =>
		`No ${what} with ${fieldReference(field, labelOf)} ${String(params[field])}`;
	if (operation.path.startsWith('/contacts/')) return missing('contact', 'uuid');
	if (operation.path.startsWith('/agents/')) return missing('agent', 'agent_id');
	if (operation.path.startsWith('/messages/status/')) return missing('message', 'uuid');
	if (operation.path === '/conversations') return 'No contact or conversation matches the lookup';
	return 'Not found';
}

/** The path parameter a 404 is about, named by its API field in the description. */
function identifierHint(operation: Operation): string {
	const names = [...operation.path.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1]);
	return names.length > 0 ? ` (API field ${names.join(', ')})` : '';
}

/**
 * Turns a service error into what the user needs to read: the message the service gave where it
 * is about their input (400), otherwise guidance written for the operation. An error answer
 * without the service's JSON error body came from something else at the credential's URL.
 */
export function explainServiceError(
	operation: Operation,
	status: number,
	body: unknown,
	context: ExplainContext = {},
): ErrorExplanation {
	const api = APIS[operation.api];
	const disposition = errorDisposition(status);
	if (!isServiceErrorBody(body, status) && disposition === 'permanent') {
		return {
			message:
				`The URL in the ${api.credentialName} credential does not look like the Convo service: ` +
				`it answered ${status} without the service's JSON error body`,
			description:
				`Check the URL in the ${api.credentialName} credential: ` +
				`it must be the address of the Convo ${operation.api} API (its path ends in ${api.prefix}, ` +
				'which is added when missing).',
			disposition,
		};
	}
	const serviceSays = serviceErrorMessage(body);
	const params = context.params ?? {};
	const said = serviceSays ? ` The service said: ${serviceSays}` : '';
	switch (status) {
		case 400:
			return {
				message: `The service refused the request: ${serviceSays ?? 'validation failed'}`,
				description:
					operation.path === '/send-template'
						? 'Check the template variables, the phone numbers and the buttons; ' +
							'a send can also be blocked by the platform.'
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
				description:
					`Use identifiers of the business that owns the ${api.secretName} in the ` +
					`${api.credentialName} credential.${said}`,
				disposition,
			};
		case 404:
			return {
				message: `${notFound(operation, params, context.labelOf)} (404)`,
				description:
					`Check the identifier${identifierHint(operation)}; ` +
					`it must belong to the business of the ${api.credentialName} credential.${said}`,
				disposition,
			};
		case 409:
			return {
				message: 'Several contacts or conversations match (409)',
				description: `Add the other lookup field (${['phone', 'field_value']
					.map((field) => fieldReference(field, context.labelOf))
					.join(', or ')}) so that exactly one matches.`,
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
