import type { IDataObject, IExecuteFunctions, INode, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import * as agent from './agent';
import * as contact from './contact';
import * as conversation from './conversation';
import * as message from './message';
import * as searchItem from './searchItem';
import * as template from './template';
import type { ConvoOperation, ConvoResource } from './types';

const resources: Record<string, Record<string, ConvoOperation>> = {
	message: { send: message.send, getStatus: message.getStatus },
	template: { send: template.send },
	contact: {
		update: contact.update,
		getMessages: contact.getMessages,
		closeConversations: contact.closeConversations,
		reopenConversations: contact.reopenConversations,
	},
	conversation: { get: conversation.get },
	searchItem: { upsert: searchItem.upsert, getAll: searchItem.getAll },
	agent: { create: agent.create, get: agent.get, update: agent.update },
} satisfies Record<ConvoResource, Record<string, ConvoOperation>>;

function errorItem(error: Error, itemIndex: number): INodeExecutionData {
	const json: IDataObject = { error: error.message };
	const description = (error as NodeApiError).description;
	if (description) json.description = description;
	const httpCode = (error as NodeApiError).httpCode;
	if (httpCode) json.httpCode = httpCode;
	return { json, pairedItem: { item: itemIndex } };
}

/** Errors the node raised itself already say what to do; anything else is wrapped with its item. */
function asNodeError(node: INode, error: unknown, itemIndex: number): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeOperationError(node, error as Error, { itemIndex });
}

/**
 * Runs the chosen operation once per input item. Up to `requestsAtOnce` items are in flight at a
 * time; the output keeps the input order either way, and every output item is paired to its input.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operationName = this.getNodeParameter('operation', 0) as string;
	const operation = resources[resource]?.[operationName];
	if (!operation) {
		throw new NodeOperationError(this.getNode(), `The operation "${operationName}" is not known for "${resource}"`);
	}
	const nodeVersion = this.getNode().typeVersion;
	const requestsAtOnce = Math.max(1, Math.floor(this.getNodeParameter('batching.requestsAtOnce', 0, 1) as number));

	const results: INodeExecutionData[][] = new Array(items.length);
	const runItem = async (itemIndex: number) => {
		try {
			const output = await operation.execute.call(this, itemIndex, nodeVersion);
			results[itemIndex] = this.helpers.constructExecutionMetaData(this.helpers.returnJsonArray(output), {
				itemData: { item: itemIndex },
			});
		} catch (error) {
			if (this.continueOnFail()) {
				results[itemIndex] = [errorItem(error as Error, itemIndex)];
				return;
			}
			throw asNodeError(this.getNode(), error, itemIndex);
		}
	};

	// A small pool: each worker takes the next item until none is left.
	let next = 0;
	const worker = async () => {
		while (next < items.length) await runItem(next++);
	};
	await Promise.all(Array.from({ length: Math.min(requestsAtOnce, items.length) }, worker));
	return [results.flat()];
}
