import { createHash, timingSafeEqual } from 'node:crypto';

/** The credential `convoTriggerApi`: the custom header the dashboard adds to each delivery. */
export interface HeaderAuth {
	headerName: string;
	secret: string;
}

export type RequestHeaders = Record<string, string | string[] | undefined>;

/** RFC 9110 field-name: a token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Why the credential cannot work, or undefined when it can. Checked by the credential test too. */
export function headerAuthProblem(auth: Partial<HeaderAuth>): string | undefined {
	const name = (auth.headerName ?? '').trim();
	if (name === '') return 'Header Name is empty';
	if (!HEADER_NAME.test(name)) return `Header Name "${name}" is not a valid HTTP header name`;
	if ((auth.secret ?? '') === '') return 'Secret is empty';
	return undefined;
}

function digest(value: string): Buffer {
	return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * True when the request carries the header with exactly the secret value. Both sides are hashed
 * first so the comparison takes the same time whatever the lengths (timingSafeEqual needs equal
 * lengths). A header sent twice is refused: which copy is meant is ambiguous.
 */
export function hasValidHeader(headers: RequestHeaders, auth: HeaderAuth): boolean {
	const received = headers[auth.headerName.trim().toLowerCase()];
	if (typeof received !== 'string') return false;
	return timingSafeEqual(digest(received), digest(auth.secret));
}

/** Headers for the output item, with the secret header's value hidden. */
export function redactHeaders(headers: RequestHeaders, auth: HeaderAuth | undefined): RequestHeaders {
	const copy: RequestHeaders = { ...headers };
	if (auth !== undefined) {
		const name = auth.headerName.trim().toLowerCase();
		if (copy[name] !== undefined) copy[name] = '[hidden]';
	}
	return copy;
}
