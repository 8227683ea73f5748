import type { IDataObject, IExecuteFunctions, IN8nHttpFullResponse, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	APIS,
	apiRoot,
	buildRequest,
	ContractError,
	explainServiceError,
	repeatsItsEffect,
	retryAfterMs,
	type Operation,
	type OperationInput,
	type WireRequest,
} from '../../shared';
import { acceptedAnswer, rememberAccepted, type SendIdentity } from './acceptedSends';
import { labelledIssue, type LabelOf } from '../helpers/fieldLabels';
import { sendWithRetries } from './retries';

function contractFailure(
	this: IExecuteFunctions,
	error: ContractError,
	itemIndex: number,
	labelOf: LabelOf,
): NodeOperationError {
	const apiFields = error.issues
		.filter((issue) => issue.field !== '')
		.map((issue) => `${issue.field} (${issue.location})`);
	return new NodeOperationError(this.getNode(), error.issues.map((issue) => labelledIssue(labelOf, issue)).join('; '), {
		itemIndex,
		description: `Nothing was sent. Correct the field named in the message.${
			apiFields.length > 0 ? ` API field${apiFields.length > 1 ? 's' : ''}: ${[...new Set(apiFields)].join(', ')}.` : ''
		}`,
	});
}

/**
 * The one way the node talks to the service: the input is checked against the contract first
 * (nothing reaches the wire that the service would refuse for a documented rule), then sent with
 * the operation's credential. A 429 waits as the service asks and a failure that proves the
 * request was not handled is tried again (nodes/shared/retryPolicy.ts); an operation that must
 * not be repeated answers from memory when n8n's Retry On Fail runs the node again. A failed
 * call becomes an error that says what to do, naming the operation's fields by `labelOf`.
 */
export async function convoRequest(
	this: IExecuteFunctions,
	operation: Operation,
	input: OperationInput,
	itemIndex: number,
	labelOf: LabelOf,
): Promise<IDataObject> {
	let request: WireRequest;
	try {
		request = buildRequest(operation, input);
	} catch (error) {
		if (error instanceof ContractError) throw contractFailure.call(this, error, itemIndex, labelOf);
		throw new NodeOperationError(this.getNode(), error as Error, { itemIndex });
	}

	const api = APIS[operation.api];
	const credentials = await this.getCredentials(api.credentialType, itemIndex);
	const baseUrl = String(operation.api === 'messaging' ? credentials.baseUrl : credentials.externalUrl);
	const executionId = this.getExecutionId();
	const identity: SendIdentity | undefined =
		repeatsItsEffect(operation) && executionId ? { executionId, nodeId: this.getNode().id, itemIndex } : undefined;
	const remembered = identity && acceptedAnswer(identity, request, baseUrl);
	if (remembered) return remembered;

	const last = await sendWithRetries(
		async () =>
			(await this.helpers.httpRequestWithAuthentication.call(this, api.credentialType, {
				method: request.method,
				url: `${apiRoot(operation.api, baseUrl)}${request.path}`,
				qs: request.query,
				body: request.body as IDataObject | undefined,
				json: true,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
			})) as IN8nHttpFullResponse,
		(statusCode) => statusCode < 400,
	);
	if (last.kind === 'unreachable') {
		// n8n hands back an error it already wrapped unchanged, so a fresh one carries our guidance;
		// only the reason is kept, never the request (it holds the credential's header).
		const reason = (last.error as Error).message;
		throw new NodeApiError(this.getNode(), { message: reason } as JsonObject, {
			itemIndex,
			message: `Could not reach the Convo service: ${reason}`,
			description: `Check the URL in the ${api.credentialName} credential and that the service is reachable from n8n.`,
		});
	}
	const { response } = last;
	if (response.statusCode < 400) {
		const answer = response.body as IDataObject;
		if (identity) rememberAccepted(identity, request, baseUrl, answer);
		return answer;
	}
	const retryAfter = retryAfterMs(response.headers?.['retry-after']);
	const explained = explainServiceError(operation, response.statusCode, response.body, {
		params: input.params,
		retryAfterSeconds: retryAfter === undefined ? undefined : Math.ceil(retryAfter / 1000),
		labelOf,
	});
	const body = response.body && typeof response.body === 'object' ? response.body : { body: response.body };
	throw new NodeApiError(this.getNode(), body as JsonObject, {
		itemIndex,
		httpCode: String(response.statusCode),
		message: explained.message,
		description: explained.description,
	});
}
