/**
 * What the sandbox conformance tests share: one running sandbox per file (reset before each test),
 * calls of contract operations over HTTP whose 2xx bodies are checked against the contract's
 * response schema and whose error bodies are checked against the one error shape.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { z } from 'zod/v4';

import { APIS, ERROR_CODES, OPERATIONS, type OperationKey } from 'convo-contract';
import { startSandbox, type RunningSandbox } from '../../sandbox/src';

export type Business = RunningSandbox['fixture']['businesses'][number];

export interface SandboxTestContext {
	sandbox: RunningSandbox;
	business: Business;
	other: Business;
}

export function useSandbox(): SandboxTestContext {
	const context = {} as SandboxTestContext;
	beforeAll(async () => {
		context.sandbox = await startSandbox({ port: 0 });
		[context.business, context.other] = context.sandbox.fixture.businesses;
	});
	beforeEach(async () => {
		await admin(context, 'POST', 'reset');
	});
	afterAll(async () => {
		await context.sandbox?.close();
	});
	return context;
}

/** The one error body shape (docs/decisions/contract/error-body.md). */
export const errorBodySchema = z.strictObject({
	status: z.int(),
	code: z.string().min(1),
	message: z.string().min(1),
	field: z.string().optional(),
});

/** Response bodies are read loosely in tests; the contract schemas check their shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface Answer<T = Json> {
	status: number;
	body: T;
	headers: Headers;
}

export type Auth = { bearer?: string; apiKey?: string } | 'business' | 'none';

export interface CallInput {
	params?: Record<string, string>;
	query?: Record<string, string | number>;
	body?: unknown;
	/** Default: business 0's credential of the operation's API. */
	auth?: Auth;
	as?: Business;
	/** Raw body text (sent as is, with content-type application/json unless headers say otherwise). */
	raw?: string;
	headers?: Record<string, string>;
}

export function operationUrl(context: SandboxTestContext, key: OperationKey, input: CallInput = {}): string {
	const operation = OPERATIONS[key];
	const path = operation.path.replace(/:([A-Za-z_]+)/g, (_, name: string) =>
		encodeURIComponent(input.params?.[name] ?? 'missing'),
	);
	const url = new URL(`${context.sandbox.baseUrl}${APIS[operation.api].prefix}${path}`);
	for (const [name, value] of Object.entries(input.query ?? {})) url.searchParams.set(name, String(value));
	return url.toString();
}

export function authHeaders(
	context: SandboxTestContext,
	key: OperationKey,
	auth: Auth = 'business',
	as?: Business,
): Record<string, string> {
	if (auth === 'none') return {};
	const business = as ?? context.business;
	const chosen =
		auth === 'business'
			? OPERATIONS[key].api === 'messaging'
				? { bearer: business.accessToken }
				: { apiKey: business.apiKey }
			: auth;
	const headers: Record<string, string> = {};
	if (chosen.bearer !== undefined) headers.authorization = `Bearer ${chosen.bearer}`;
	if (chosen.apiKey !== undefined) headers['x-api-key'] = chosen.apiKey;
	return headers;
}

/** Calls one operation; a 2xx body must pass the contract's response schema, an error the error shape. */
export async function call<T = Json>(
	context: SandboxTestContext,
	key: OperationKey,
	input: CallInput = {},
): Promise<Answer<T>> {
	const operation = OPERATIONS[key];
	const headers: Record<string, string> = {
		...authHeaders(context, key, input.auth, input.as),
		...(input.headers ?? {}),
	};
	let body: string | undefined = input.raw;
	if (body === undefined && input.body !== undefined) body = JSON.stringify(input.body);
	if (body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
		headers['content-type'] = 'application/json';
	const response = await fetch(operationUrl(context, key, input), { method: operation.method, headers, body });
	const answer = await read<T>(response);
	if (answer.status >= 200 && answer.status < 300) operation.response.parse(answer.body);
	else expectErrorBody(answer);
	return answer;
}

export async function read<T = Json>(response: Response): Promise<Answer<T>> {
	const text = await response.text();
	let body: unknown = text;
	try {
		body = text === '' ? undefined : JSON.parse(text);
	} catch {
		// not JSON: left as text, which the error-shape check then refuses
	}
	return { status: response.status, body: body as T, headers: response.headers };
}

export function expectErrorBody(answer: Answer, status?: number): void {
	const parsed = errorBodySchema.safeParse(answer.body);
	if (!parsed.success) throw new Error(`answer ${answer.status} has no error body: ${JSON.stringify(answer.body)}`);
	expect(parsed.data.status).toBe(answer.status);
	expect(parsed.data.code).toBe(ERROR_CODES[answer.status]);
	if (status !== undefined) expect(answer.status).toBe(status);
}

export async function admin<T = Json>(
	context: SandboxTestContext,
	method: string,
	path: string,
	body?: unknown,
): Promise<T> {
	const response = await fetch(`${context.sandbox.baseUrl}/__sandbox/${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const answer = await read<T>(response);
	if (answer.status >= 300)
		throw new Error(`admin ${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
	return answer.body;
}

export const contactOf = (business: Business, wanted: { inWindow: boolean; undeliverable?: boolean }) => {
	const found = business.contacts.find(
		(contact) => contact.inWindow === wanted.inWindow && contact.undeliverable === (wanted.undeliverable ?? false),
	);
	if (!found) throw new Error('fixture lacks such a contact');
	return found;
};

export const digits = (phone: string) => phone.replace(/\D/g, '');

export function textMessage(business: Business, to: string, text = 'hello', extra: Record<string, unknown> = {}) {
	return { to, from: 'whatsapp', type: 'text', content: { text }, channel_uuid: business.channelUuid, ...extra };
}

export const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000404';

/** A tiny HTTP receiver for webhook deliveries; answers each with `status` (default 200). */
export interface Receiver {
	url: string;
	received: Array<{ method: string; headers: IncomingHttpHeaders; body: Json }>;
	status: number;
	close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
	const receiver = { received: [], status: 200 } as unknown as Receiver;
	const server: Server = createServer((request, response) => {
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', () => {
			receiver.received.push({
				method: request.method ?? '',
				headers: request.headers,
				body: JSON.parse(Buffer.concat(chunks).toString() || 'null'),
			});
			response.statusCode = receiver.status;
			response.end('ok');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
	receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
	return receiver;
}

/** Polls until `check` returns something truthy or `ms` passed. */
export async function eventually<T>(
	check: () => Promise<T | undefined | false> | T | undefined | false,
	ms = 3000,
): Promise<T> {
	const until = Date.now() + ms;
	for (;;) {
		const value = await check();
		if (value) return value;
		if (Date.now() > until) throw new Error('condition not met in time');
		await new Promise((resolve) => setTimeout(resolve, 25));
	}
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
