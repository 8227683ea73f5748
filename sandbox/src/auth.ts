/**
 * SPEC 5: bearer token on the messaging API, X-API-Key on the external API. A missing or wrong
 * credential, or the other API's kind of credential, is 401; the message says which kind of
 * secret the API takes when the other kind was sent. Secrets never appear in answers.
 */
import type { FastifyRequest } from 'fastify';

import type { ApiKind } from 'convo-contract';
import { ACCESS_TOKEN_PREFIX, API_KEY_PREFIX } from './fixture';
import { HttpError } from './httpError';
import type { Business } from './model';
import type { Store } from './store';

function header(request: FastifyRequest, name: string): string | undefined {
	const value = request.headers[name];
	return Array.isArray(value) ? value[0] : value;
}

function bearerToken(request: FastifyRequest): string | undefined {
	const authorization = header(request, 'authorization');
	return authorization === undefined ? undefined : (/^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? '');
}

const looksLikeApiKey = (store: Store, secret: string) =>
	secret.startsWith(API_KEY_PREFIX) || store.businessByApiKey(secret) !== undefined;
const looksLikeAccessToken = (store: Store, secret: string) =>
	secret.startsWith(ACCESS_TOKEN_PREFIX) || store.businessByToken(secret) !== undefined;

const unauthorized = (message: string) => new HttpError(401, message);

export function authenticate(store: Store, api: ApiKind, request: FastifyRequest): Business {
	return api === 'messaging' ? byAccessToken(store, request) : byApiKey(store, request);
}

function byAccessToken(store: Store, request: FastifyRequest): Business {
	const token = bearerToken(request);
	if (token === undefined) {
		const key = header(request, 'x-api-key');
		throw unauthorized(
			key === undefined
				? 'Missing access token: send Authorization: Bearer <access token>'
				: 'Missing access token: the messaging API takes Authorization: Bearer <access token>; ' +
						'X-API-Key is for the external API',
		);
	}
	const business = token === '' ? undefined : store.businessByToken(token);
	if (business) return business;
	if (token !== '' && looksLikeApiKey(store, token)) {
		throw unauthorized(
			'Invalid access token: this looks like an API key of the external API; the messaging API takes the access token',
		);
	}
	throw unauthorized('Invalid access token: send Authorization: Bearer <access token>');
}

function byApiKey(store: Store, request: FastifyRequest): Business {
	const key = header(request, 'x-api-key')?.trim();
	if (key === undefined) {
		const token = bearerToken(request);
		if (token === undefined) throw unauthorized('Missing API key: send the X-API-Key header');
		throw unauthorized(
			token !== '' && looksLikeApiKey(store, token)
				? 'Missing API key: the external API takes the API key in the X-API-Key header, not as a bearer token'
				: 'Missing API key: the external API takes the X-API-Key header, not Authorization: Bearer',
		);
	}
	const business = store.businessByApiKey(key);
	if (business) return business;
	if (key !== '' && looksLikeAccessToken(store, key)) {
		throw unauthorized(
			'Invalid API key: this looks like an access token of the messaging API; the external API takes the API key',
		);
	}
	throw unauthorized('Invalid API key');
}
