import type { IDataObject, IExecuteFunctions, IN8nHttpFullResponse, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	APIS,
	apiRoot,
	buildRequest,
	ContractError,
	explainServiceError,
	type Operation,
	type OperationInput,
	type WireRequest,
} from '../shared';

function retryAfterSeconds(headers: IN8nHttpFullResponse['headers']): number | undefined {
	const value = Number(headers?.['retry-after']);
	return Number.isFinite(value) ? value : undefined;
}

/**
 * The one way the node talks to the service: the input is checked against the contract first
 * (nothing reaches the wire that the service would refuse for a documented rule), then sent with
 * the operation's credential; a failed call becomes an error that says what to do.
 */
export async function convoRequest(
	this: IExecuteFunctions,
	operation: Operation,
	input: OperationInput,
	itemIndex: number,
): Promise<IDataObject> {
	let request: WireRequest;
	try {
		request = buildRequest(operation, input);
	} catch (error) {
		if (error instanceof ContractError) {
			throw new NodeOperationError(this.getNode(), error.message, {
				itemIndex,
				description: 'Nothing was sent. Correct the field named in the message.',
			});
		}
		throw new NodeOperationError(this.getNode(), error as Error, { itemIndex });
	}

	const api = APIS[operation.api];
	const credentials = await this.getCredentials(api.credentialType, itemIndex);
	const baseUrl = String(operation.api === 'messaging' ? credentials.baseUrl : credentials.externalUrl);

	let response: IN8nHttpFullResponse;
	try {
		response = (await this.helpers.httpRequestWithAuthentication.call(this, api.credentialType, {
			method: request.method,
			url: `${apiRoot(operation.api, baseUrl)}${request.path}`,
			qs: request.query,
			body: request.body as IDataObject | undefined,
			json: true,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
		})) as IN8nHttpFullResponse;
	} catch (error) {
		// n8n hands back an error it already wrapped unchanged, so a fresh one carries our guidance;
		// only the reason is kept, never the request (it holds the credential's header).
		const reason = (error as Error).message;
		throw new NodeApiError(this.getNode(), { message: reason } as JsonObject, {
			itemIndex,
			message: `Could not reach the Convo service: ${reason}`,
			description: `Check the URL in the ${api.credentialName} credential and that the service is reachable from n8n.`,
		});
	}

	if (response.statusCode >= 400) {
		const explained = explainServiceError(operation, response.statusCode, response.body, {
			params: input.params,
			retryAfterSeconds: retryAfterSeconds(response.headers),
		});
		const body = response.body && typeof response.body === 'object' ? response.body : { body: response.body };
		throw new NodeApiError(this.getNode(), body as JsonObject, {
			itemIndex,
			httpCode: String(response.statusCode),
			message: explained.message,
			description: explained.description,
		});
	}
	return response.body as IDataObject;
}
