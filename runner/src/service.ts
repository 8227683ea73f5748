/**
 * The runner's one HTTP client of the service: requests are built and checked by the contract in
 * convo-contract (packages/n8n-nodes-convo/nodes/shared), sent with keep-alive and a hard total deadline, and every
 * answer is turned into an outcome by ONE table (`classify`): what is retried, held, failed, unknown or stops a
 * campaign. The API key lives only in this object's closure: never in an error, a log line or Redis.
 */
import type { Readable } from 'node:stream';

import { Agent, request, errors as undiciErrors } from 'undici';
import type { z } from 'zod/v4';

import {
	buildRequest,
	connectionErrorDisposition,
	errorDisposition,
	contactMessagesResponse,
	getConversationResponse,
	messageStatusResponse,
	OPERATIONS,
	requestUrl,
	retryAfterMs,
	sendTemplateQuery,
	sendTemplateResponse,
	serviceErrorMessage,
	type OperationInput,
	type WireRequest,
} from 'convo-contract';

/** What became of one call. */
export type CallOutcome =
	| { kind: 'ok'; status: number; body: unknown }
	/** 429: hold the sender number for this long, then try again; not a failure. */
	| { kind: 'hold'; waitMs: number; reason: string }
	/** The service provably did not act on it (5xx answer, connection refused): safe to try again. */
	| { kind: 'retry'; reason: string }
	/** Sent or not, nobody knows (timeout or reset after the request was written). */
	| { kind: 'unknown'; reason: string }
	/** The service refused this request; the same request fails the same way. */
	| { kind: 'refused'; status: number; reason: string }
	/** The credential or a campaign-wide resource was refused: stop the whole campaign. */
	| { kind: 'stop'; status: number; reason: string }
	/**
	 * B8 only: the template, the sending number or the API key cannot be used now, whoever the
	 * recipient (a blocked send, 403, 401). Not sent: the campaigns that use it pause (sending/refusals.ts);
	 * `atOnce`: one answer is proof enough (403, 401), else a streak of them is (a blocked send).
	 */
	| { kind: 'blocked'; status: number; refusal: SendRefusal; atOnce: boolean; message: string; reason: string }
	/** B8 only: the business's messaging limit refused a new customer: not sent, the number waits. */
	| { kind: 'limited'; status: number; reason: string };

/** What a blocked B8 send says cannot be used now: a campaign paused for it carries this as its reason. */
const SEND_REFUSALS = ['template_refused', 'number_refused', 'unauthorized'] as const;
type SendRefusal = (typeof SEND_REFUSALS)[number];

/** Whether a campaign's pause reason is a refusal of the service: its resume re-checks with one send first. */
export const isRefusal = (reason: string | undefined): boolean =>
	(SEND_REFUSALS as readonly string[]).includes(reason ?? '');

/** The start of a blocked send's message (docs/decisions/sandbox/blocked-sends.md). */
const BLOCKED_SEND = 'blocked send:';

/** A 429 without a readable Retry-After holds the number this long; a very long one is capped. */
const DEFAULT_HOLD_MS = 1000;
const MAX_HOLD_MS = 300_000;

/**
 * Every call sends the one API key, so a 401 always means that key and stops whatever is calling:
 * the stop and its reason live here, not with each caller.
 */
const API_KEY_REFUSED = 'the API key was refused: check CONVO_API_KEY';

/** The field an error body names (the one error body shape: packages/.../errorBody.ts), if any. */
function errorField(body: unknown): string | undefined {
	const field = body !== null && typeof body === 'object' ? (body as { field?: unknown }).field : undefined;
	return typeof field === 'string' ? field : undefined;
}

/**
 * A B8 answer that says the template, the sending number or the key cannot be used now, whoever
 * the recipient: a blocked send (400 whose message starts `blocked send:`, its field naming what
 * is refused), a 403 (the template or number, by its field; one for the agent stays a stop: it is
 * the campaign's own setting), a 401. Undefined for any other answer.
 */
function sendRefusal(status: number, body: unknown, said: string | undefined): CallOutcome | undefined {
	const field = errorField(body);
	const message = said ?? '';
	const blocked = (refusal: SendRefusal, atOnce: boolean, why: string): CallOutcome => ({
		kind: 'blocked',
		status,
		refusal,
		atOnce,
		message,
		reason: `${status}: ${why}${said ? ` (the service said: ${said})` : ''}`,
	});
	if (status === 401) return blocked('unauthorized', true, API_KEY_REFUSED);
	if (status === 403 && field === 'from_phone_number')
		return blocked('number_refused', true, 'the sending number was refused');
	if (status === 403 && field !== 'agent_id') return blocked('template_refused', true, 'the template was refused');
	if (status !== 400 || !said?.startsWith(BLOCKED_SEND)) return undefined;
	if (field === 'template_id') return blocked('template_refused', false, 'the template cannot be sent now');
	if (field === 'from_phone_number') return blocked('number_refused', false, 'the sending number cannot send now');
	if (field === 'phone') return { kind: 'limited', status, reason: `${status}: ${said}` };
	return undefined;
}

/**
 * The one table from an answer to an outcome, on the contract's retry policy (convo-contract):
 * `stopOn` lists the statuses besides 401 that stop a whole campaign or run, with the reason;
 * `sends`: the answer is B8's to a campaign's send, whose refusals of the template, number or key
 * pause campaigns (sendRefusal) instead.
 */
export function classify(
	status: number,
	body: unknown,
	headers: Record<string, string | string[] | undefined>,
	stopOn: Record<number, string>,
	sends = false,
): CallOutcome {
	if (status >= 200 && status < 300) return { kind: 'ok', status, body };
	const said = serviceErrorMessage(body);
	const refusal = sends ? sendRefusal(status, body, said) : undefined;
	if (refusal) return refusal;
	const disposition = errorDisposition(status);
	if (disposition === 'rate_limited') {
		const header = headers['retry-after'];
		const asked = retryAfterMs(Array.isArray(header) ? header[0] : header);
		return {
			kind: 'hold',
			waitMs: Math.min(Math.max(asked ?? DEFAULT_HOLD_MS, 100), MAX_HOLD_MS),
			reason: `429 rate limited${said ? `: ${said}` : ''}`,
		};
	}
	if (disposition === 'retry') return { kind: 'retry', reason: `${status}${said ? `: ${said}` : ''}` };
	const stop = status === 401 ? API_KEY_REFUSED : stopOn[status];
	if (stop) return { kind: 'stop', status, reason: `${status}: ${stop}${said ? ` (the service said: ${said})` : ''}` };
	return { kind: 'refused', status, reason: `${status}: ${said ?? 'refused by the service'}` };
}

/** A failed connection: retried only when it proves no byte of the request left; otherwise unknown. */
export function classifyNetworkError(error: unknown): CallOutcome {
	const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
	if (connectionErrorDisposition(code) === 'retry') return { kind: 'retry', reason: `could not connect (${code})` };
	if (
		error instanceof undiciErrors.RequestAbortedError ||
		(error as Error).name === 'AbortError' ||
		(error as Error).name === 'TimeoutError'
	) {
		return { kind: 'unknown', reason: 'no answer before the deadline; the service may have acted on it' };
	}
	return {
		kind: 'unknown',
		reason: `the connection failed after the request was sent (${code ?? (error as Error).message})`,
	};
}

/** The operations the runner calls. */
export type ServiceOperation =
	| 'sendTemplate'
	| 'getConversation'
	| 'getContactMessages'
	| 'upsertSearchItem'
	| 'listSearchItems';

/** An answer's body: JSON when it parses, else its text (kept for the message). */
async function readBody(body: { text(): Promise<string> }): Promise<unknown> {
	const text = await body.text();
	try {
		return text === '' ? undefined : JSON.parse(text);
	} catch {
		return text;
	}
}

/** B8's answers that stop a whole campaign, besides 401. */
const SEND_TEMPLATE_STOPS: Record<number, string> = {
	403: 'the template, the sending number or the agent belongs to another business',
	// B8 names no per-recipient resource (an unknown phone gets a new contact), so a 404 is the template or agent.
	404: 'the template or the agent does not exist (or CONVO_EXTERNAL_URL points at the wrong place)',
};

/** A B8 outcome with the message id and template name of its 2xx answer (a 2xx without an id is unknown). */
type TemplateSent = CallOutcome & { messageId?: string; templateName?: string };

function sentTemplate(outcome: CallOutcome): TemplateSent {
	if (outcome.kind !== 'ok') return outcome;
	const parsed = sendTemplateResponse.safeParse(outcome.body);
	if (!parsed.success) return { kind: 'unknown', reason: 'the service answered 2xx without a message id' };
	return { ...outcome, messageId: parsed.data.message_id, templateName: parsed.data.template_name };
}

type SendTemplateQuery = z.input<typeof sendTemplateQuery>;

export interface ServiceOptions {
	externalUrl: string;
	apiKey: string;
	/** The messaging API (A1), when the runner has its credential: delivery tracking asks it. */
	messaging?: { baseUrl: string; accessToken: string };
	deadlineMs: number;
	/**
	 * Connections per origin (64 unless told). A send that finds them all busy waits for one to
	 * free, about the service's answer time, and reaches the service late, bunched with the sends
	 * after it: the runner gives as many as its sends can have in flight (runtime.ts).
	 */
	connections?: number;
}

export class ConvoService {
	private readonly agent: Agent;
	readonly #apiKey: string;
	readonly #accessToken?: string;

	constructor(private readonly options: ServiceOptions) {
		this.#apiKey = options.apiKey;
		this.#accessToken = options.messaging?.accessToken;
		this.agent = new Agent({
			keepAliveTimeout: 4_000,
			connections: options.connections ?? 64,
			connect: { timeout: Math.min(options.deadlineMs, 5_000) },
		});
	}

	/**
	 * The request of a contract operation, built and checked by the contract. Called outside any
	 * exchange, so bad input throws ContractError (naming the field) instead of reading as a failed
	 * connection: nothing was sent, and the same input fails the same way every time.
	 */
	private wire(key: ServiceOperation, input: OperationInput): WireRequest {
		return buildRequest(OPERATIONS[key], input);
	}

	private send(wire: WireRequest, signal?: AbortSignal, idleTimeoutMs?: number) {
		return this.exchange(
			wire.method,
			requestUrl('external', this.options.externalUrl, wire),
			wire.body === undefined ? undefined : JSON.stringify(wire.body),
			signal,
			idleTimeoutMs,
		);
	}

	private exchange(
		method: WireRequest['method'],
		url: string,
		body: string | undefined,
		signal?: AbortSignal,
		idleTimeoutMs?: number,
	) {
		return request(url, {
			method,
			dispatcher: this.agent,
			headers: {
				'x-api-key': this.#apiKey,
				accept: 'application/json',
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body,
			signal,
			...(idleTimeoutMs ? { headersTimeout: idleTimeoutMs, bodyTimeout: idleTimeoutMs } : {}),
		});
	}

	/** One call of a contract operation; rejects with ContractError (naming the field) before sending bad input. */
	async call(
		key: ServiceOperation,
		input: OperationInput,
		stopOn: Record<number, string> = {},
		signal?: AbortSignal,
	): Promise<CallOutcome> {
		const wire = this.wire(key, input);
		return this.withDeadline(signal, (bounded) => this.outcomeOf(() => this.send(wire, bounded), stopOn));
	}

	private deadline(): AbortSignal {
		return AbortSignal.timeout(this.options.deadlineMs);
	}

	/**
	 * Runs a call under a signal that aborts at the deadline or when `stop` does, and lets go of
	 * `stop` when the call ends. Not AbortSignal.any(): a composite that undici listens to stays in
	 * the long-lived stop signal's dependants (nodejs/node issues 55351 and 64476), and a worker
	 * grew from 102 to 385 MB over a 1,000,000-recipient campaign (benchmark 15).
	 */
	private async withDeadline<T>(stop: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
		if (!stop) return call(this.deadline());
		const bounded = new AbortController();
		const timer = setTimeout(
			() => bounded.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
			this.options.deadlineMs,
		);
		const onStop = () => bounded.abort(stop.reason);
		if (stop.aborted) onStop();
		else stop.addEventListener('abort', onStop, { once: true });
		try {
			return await call(bounded.signal);
		} finally {
			clearTimeout(timer);
			stop.removeEventListener('abort', onStop);
		}
	}

	private async outcomeOf(
		exchange: () => ReturnType<typeof request>,
		stopOn: Record<number, string>,
		sends = false,
	): Promise<CallOutcome> {
		try {
			const response = await exchange();
			return classify(response.statusCode, await readBody(response.body), response.headers, stopOn, sends);
		} catch (error) {
			return classifyNetworkError(error);
		}
	}

	/**
	 * A call whose 2xx body is read as a stream (a list of a million items): the deadline applies to
	 * the wait for the answer and to every pause in its body, not to the whole transfer. Rejects with
	 * ContractError before sending bad input, as `call` does.
	 */
	async open(
		key: ServiceOperation,
		input: OperationInput,
		stopOn: Record<number, string> = {},
	): Promise<CallOutcome | { kind: 'stream'; body: Readable }> {
		const wire = this.wire(key, input);
		try {
			const response = await this.send(wire, undefined, this.options.deadlineMs);
			if (response.statusCode >= 200 && response.statusCode < 300) return { kind: 'stream', body: response.body };
			return classify(response.statusCode, await readBody(response.body), response.headers, stopOn);
		} catch (error) {
			return classifyNetworkError(error);
		}
	}

	/** B8. The message id, or what else happened. */
	async sendTemplate(input: OperationInput, signal?: AbortSignal): Promise<TemplateSent> {
		return sentTemplate(await this.call('sendTemplate', input, SEND_TEMPLATE_STOPS, signal));
	}

	/**
	 * B8 for one campaign's recipients: the query (template, number, agent) is checked by the
	 * contract here, once; each body is a snapshot row the contract checked when the campaign was
	 * created (campaigns/schema.ts, checkRow), so a send only serializes it.
	 */
	templateSender(
		query: SendTemplateQuery,
	): (body: Record<string, unknown>, signal?: AbortSignal) => Promise<TemplateSent> {
		const operation = OPERATIONS.sendTemplate;
		const checked = sendTemplateQuery.parse(query);
		const url = requestUrl('external', this.options.externalUrl, {
			method: operation.method,
			path: operation.path,
			query: Object.fromEntries(Object.entries(checked).filter(([, value]) => value !== undefined)),
		});
		return async (body, signal) => {
			const outcome = await this.withDeadline(signal, (bounded) =>
				this.outcomeOf(
					() => this.exchange(operation.method, url, JSON.stringify(body), bounded),
					SEND_TEMPLATE_STOPS,
					true,
				),
			);
			return sentTemplate(outcome);
		};
	}

	/** B7 by phone: the recipient's conversation with its latest messages. */
	async conversationByPhone(
		phone: string,
	): Promise<CallOutcome & { conversation?: ReturnType<typeof getConversationResponse.parse> }> {
		const outcome = await this.call('getConversation', { query: { phone, message_limit: 200 } });
		if (outcome.kind !== 'ok') return outcome;
		const parsed = getConversationResponse.safeParse(outcome.body);
		if (!parsed.success) return { kind: 'unknown', reason: 'the conversation lookup answered in an unexpected shape' };
		return { ...outcome, conversation: parsed.data };
	}

	/**
	 * B4: a contact's most recent messages (up to 200), each with its sender (`from`): which of the
	 * business's numbers sent an outbound one, which B7's conversation does not say.
	 */
	async contactMessages(
		contactId: string,
	): Promise<CallOutcome & { messages?: ReturnType<typeof contactMessagesResponse.parse>['messages'] }> {
		const outcome = await this.call('getContactMessages', { params: { uuid: contactId }, query: { limit: 200 } });
		if (outcome.kind !== 'ok') return outcome;
		const parsed = contactMessagesResponse.safeParse(outcome.body);
		if (!parsed.success) return { kind: 'unknown', reason: "the contact's messages answered in an unexpected shape" };
		return { ...outcome, messages: parsed.data.messages };
	}

	/** Whether A1 can be asked (the messaging API's credential is set). */
	get hasMessagingApi(): boolean {
		return this.#accessToken !== undefined && this.options.messaging !== undefined;
	}

	/**
	 * A1: a message's delivery state (enqueued, sent, delivered, read, failed). A refused token is
	 * said as the messaging API's, never with the token; the caller treats it as a failed check.
	 */
	async messageStatus(uuid: string): Promise<CallOutcome & { state?: string }> {
		const messaging = this.options.messaging;
		if (!messaging || this.#accessToken === undefined)
			return {
				kind: 'refused',
				status: 0,
				reason: 'the messaging API is not configured (CONVO_BASE_URL, CONVO_ACCESS_TOKEN)',
			};
		const wire = buildRequest(OPERATIONS.getMessageStatus, { params: { uuid } });
		const token = this.#accessToken;
		const outcome = await this.outcomeOf(
			() =>
				request(requestUrl('messaging', messaging.baseUrl, wire), {
					method: wire.method,
					dispatcher: this.agent,
					headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
					signal: this.deadline(),
				}),
			{},
		);
		if (outcome.kind === 'stop')
			return { ...outcome, reason: `${outcome.status}: the access token was refused: check CONVO_ACCESS_TOKEN` };
		if (outcome.kind !== 'ok') return outcome;
		const parsed = messageStatusResponse.safeParse(outcome.body);
		if (!parsed.success) return { kind: 'unknown', reason: 'the message status answered in an unexpected shape' };
		return { ...outcome, state: parsed.data.message.status };
	}

	async close(): Promise<void> {
		await this.agent.close();
	}
}
