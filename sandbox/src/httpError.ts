import { errorBody, type ServiceErrorBody } from 'convo-contract';

/** An answer other than 2xx, thrown by handlers and turned into the one error body shape. */
export class HttpError extends Error {
	readonly headers: Record<string, string>;

	constructor(
		readonly statusCode: number,
		message: string,
		readonly field?: string,
		headers: Record<string, string> = {},
	) {
		super(message);
		this.name = 'HttpError';
		this.headers = headers;
	}

	get body(): ServiceErrorBody {
		return errorBody(this.statusCode, this.message, this.field);
	}
}

export const notFound = (message: string, field?: string) => new HttpError(404, message, field);
export const forbidden = (message: string, field?: string) => new HttpError(403, message, field);
export const badRequest = (message: string, field?: string) => new HttpError(400, message, field);
