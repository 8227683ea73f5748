/**
 * SPEC 5: bearer token on the messaging API, X-API-Key on the external API. A missing or wrong
 * credential, or the other API's kind of credential, is 401. Secrets never appear in answers.
 */
import type { FastifyRequest } from 'fastify';

import type { ApiKind } from '../../nodes/shared';
import { HttpError } from './httpError';
import type { Business } from './model';
import type { Store } from './store';

function header(request: FastifyRequest, name: string): string | undefined {
	const value = request.headers[name];
	return Array.isArray(value) ? value[0] : value;
}

export function authenticate(store: Store, api: ApiKind, request: FastifyRequest): Business {
	if (api === 'messaging') {
		const authorization = header(request, 'authorization');
		if (!authorization) throw new HttpError(401, 'Missing access token: send Authorization: Bearer <access token>');
		const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
		const business = match ? store.businessByToken(match[1]) : undefined;
		if (!business) throw new HttpError(401, 'Invalid access token');
		return business;
	}
	const key = header(request, 'x-api-key');
	if (!key) throw new HttpError(401, 'Missing API key: send the X-API-Key header');
	const business = store.businessByApiKey(key.trim());
	if (!business) throw new HttpError(401, 'Invalid API key');
	return business;
}
