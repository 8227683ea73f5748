import type {
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
	IWebhookFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import type { RUNNER_ANSWERS } from '../../shared/runnerApi/answers';
import { RUNNER_ROUTES, runnerPath } from '../../shared/runnerRoutes';
import type { z } from 'zod/v4';

import { sendWithRetries } from './retries';

/** The credential of the runner's control API (credentials/ConvoRunnerApi.credentials.ts). */
export const RUNNER_CREDENTIAL = 'convoRunnerApi';
const CREDENTIAL_NAME = 'Convo Runner API';

export interface RunnerCall {
	method: IHttpRequestMethods;
	/** From `/api/...` on. */
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/** Sent as `Idempotency-Key`: a retry gets the first answer and changes nothing again. */
	idempotencyKey?: string;
	/** Statuses answered as `{ statusCode, body }` instead of failing (e.g. 404 for "already gone"). */
	allowStatuses?: number[];
	/** Names the API fields of a 400 by what the user sees (`template_id` -> `Template ID`). */
	labelOf?: (apiField: string) => string | undefined;
	itemIndex?: number;
}

/** The runner's base URL as users type it: a trailing slash or a typed `/api` is removed. */
export function runnerRoot(url: unknown): string {
	return String(url ?? '')
		.trim()
		.replace(/(\/+(api)?)+$/, '');
}

/** What the user should do about an error answer of the runner. */
function guidance(
	status: number,
	body: IDataObject,
	labelOf: RunnerCall['labelOf'],
): { message: string; description: string } {
	const said = typeof body.message === 'string' && body.message !== '' ? body.message : `HTTP ${status}`;
	if (status === 401 || status === 403) {
		return {
			message: 'The runner refused the token',
			description:
				`Check the Token in the ${CREDENTIAL_NAME} credential: ` +
				'it must be the RUNNER_TOKEN the runner was started with.',
		};
	}
	if (status === 404)
		return {
			message: `Not found at the runner: ${said}`,
			description: 'Check the ID: it is the id the runner answered when the campaign or run was created.',
		};
	if (status === 409)
		return {
			message: `The runner refused the request now: ${said}`,
			description: 'The campaign or run is in a state that does not allow this; read it with Get first.',
		};
	if (status === 413)
		return {
			message: `The runner refused the request as too large: ${said}`,
			description: 'Send fewer or smaller rows.',
		};
	if (status === 400 && typeof body.field === 'string' && body.field !== '') {
		const label = labelOf?.(body.field);
		// The runner's message starts with its own field name; name it as the user sees it.
		const message = label && said.startsWith(body.field) ? `${label}${said.slice(body.field.length)}` : said;
		return {
			message: `The runner refused a field: ${message}`,
			description: `Correct ${label ?? body.field} (runner API field: ${body.field}).`,
		};
	}
	if (status >= 500)
		return {
			message: `The runner failed: ${said}`,
			description: 'The runner answered with an error of its own; its log says more. Try again later.',
		};
	return { message: `The runner refused the request: ${said}`, description: 'Correct the value the message names.' };
}

/**
 * The one way the nodes talk to convo-runner's control API: bearer token from the credential,
 * JSON both ways. A 429, 5xx or refused connection is tried again (nodes/shared/retryPolicy.ts):
 * every write sent here is idempotent (an Idempotency-Key, or a state change that is the same
 * when repeated). An error answer `{ status, code, message, field? }` becomes a NodeApiError that
 * says what to do; the request, which carries the token, is never attached.
 */
export async function runnerRequest(
	this: IExecuteFunctions | IHookFunctions | IWebhookFunctions | ILoadOptionsFunctions,
	call: RunnerCall,
): Promise<{ statusCode: number; body: unknown }> {
	const credentials = await this.getCredentials(RUNNER_CREDENTIAL, call.itemIndex ?? 0);
	const url = `${runnerRoot(credentials.runnerUrl)}${call.path}`;
	const settled = (statusCode: number) => statusCode < 400 || call.allowStatuses?.includes(statusCode) === true;
	const last = await sendWithRetries(
		async () =>
			(await this.helpers.httpRequestWithAuthentication.call(this, RUNNER_CREDENTIAL, {
				method: call.method,
				url,
				qs: call.qs,
				body: call.body,
				headers: call.idempotencyKey ? { 'Idempotency-Key': call.idempotencyKey } : undefined,
				json: true,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
			})) as IN8nHttpFullResponse,
		settled,
	);
	if (last.kind === 'unreachable') {
		const reason = (last.error as Error).message;
		throw new NodeApiError(this.getNode(), { message: reason } as JsonObject, {
			itemIndex: call.itemIndex,
			message: `Could not reach the runner: ${reason}`,
			description:
				`Check the Runner URL in the ${CREDENTIAL_NAME} credential and that convo-runner start serves its API ` +
				'(RUNNER_TOKEN set) where n8n can reach it.',
		});
	}
	const { statusCode, body: answer } = last.response;
	if (settled(statusCode)) return { statusCode, body: answer };
	const body = (answer && typeof answer === 'object' ? answer : { body: answer }) as IDataObject;
	const explained = guidance(statusCode, body, call.labelOf);
	throw new NodeApiError(this.getNode(), body as JsonObject, {
		itemIndex: call.itemIndex,
		httpCode: String(statusCode),
		message: explained.message,
		description: explained.description,
	});
}

/** `runnerRequest` for routes whose answer is a JSON object. */
export async function runnerJson(
	this: IExecuteFunctions | IHookFunctions | IWebhookFunctions | ILoadOptionsFunctions,
	call: RunnerCall,
): Promise<IDataObject> {
	const { body } = await runnerRequest.call(this, call);
	return (body && typeof body === 'object' ? body : {}) as IDataObject;
}

type RunnerAnswers = typeof RUNNER_ANSWERS;

/**
 * `runnerJson` on a route of the contract (the contract's RUNNER_ROUTES, its `:id` filled with
 * `id`), its answer typed by the contract's answer schema (z.infer), which
 * test/runner/apiContract.test.ts holds the runner to. Not parsed here: every field is optional
 * to the caller, which handles a missing one where it reads it.
 */
export async function runnerAnswer<Name extends keyof RunnerAnswers>(
	context: IExecuteFunctions | IHookFunctions | IWebhookFunctions,
	name: Name,
	call: Omit<RunnerCall, 'method' | 'path'> & { id?: string },
): Promise<Partial<z.infer<RunnerAnswers[Name]>>> {
	const { id, ...rest } = call;
	const route = RUNNER_ROUTES[name];
	return (await runnerJson.call(context, { ...rest, method: route.method, path: runnerPath(route, id) })) as Partial<
		z.infer<RunnerAnswers[Name]>
	>;
}
