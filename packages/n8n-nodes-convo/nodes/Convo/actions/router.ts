import type { IDataObject, IExecuteFunctions, INode, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import pLimit from 'p-limit';

import * as agent from './agent';
import * as campaign from './campaign';
import * as contact from './contact';
import * as conversation from './conversation';
import * as dailyBudget from './dailyBudget';
import * as message from './message';
import * as reindexRun from './reindexRun';
import * as searchItem from './searchItem';
import * as suppression from './suppression';
import * as template from './template';
import type { ConvoOperation, ConvoResource, WholeInputOperation } from '../helpers/interfaces';

export const resources: Record<string, Record<string, ConvoOperation>> = {
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
	campaign: {
		create: campaign.create,
		get: campaign.get,
		getReport: campaign.getReport,
		pause: campaign.pause,
		resume: campaign.resume,
		cancel: campaign.cancel,
		delete: campaign.delete,
	},
	reindexRun: { start: reindexRun.start, get: reindexRun.get },
	suppression: {
		add: suppression.add,
		check: suppression.check,
		getAll: suppression.getAll,
		remove: suppression.remove,
	},
	dailyBudget: { get: dailyBudget.get, set: dailyBudget.set },
} satisfies Record<ConvoResource, Record<string, ConvoOperation>>;

/**
 * "resource" -> the operations that take Batching → Requests at Once: per item, and not marked
 * `batching: false`. Campaign → Create takes the whole input at once, so it has nothing to batch.
 */
export function operationsWithBatching(): Record<string, string[]> {
	return Object.fromEntries(
		Object.entries(resources).map(([resource, operations]) => [
			resource,
			Object.entries(operations)
				.filter(([, operation]) => operation.executeAll === undefined && operation.batching !== false)
				.map(([name]) => name),
		]),
	);
}

/**
 * The item a failed input becomes with "On Error: Continue", paired to its input: the message,
 * what to do, and the HTTP status as a number (so an IF node compares it with 403).
 * With "Continue (using error output)" n8n moves an item to the error output only when its JSON
 * holds nothing but `error`, `message` and `details` (n8n-core's handleNodeErrorOutput, which
 * then adds the input item's fields), so there the guidance goes under `details`.
 */
function errorItem(
	error: NodeApiError | NodeOperationError,
	itemIndex: number | number[],
	forErrorOutput: boolean,
): INodeExecutionData {
	const details: IDataObject = {};
	if (error.description) details.description = error.description;
	const httpCode = Number((error as NodeApiError).httpCode);
	if (Number.isInteger(httpCode) && httpCode > 0) details.httpCode = httpCode;
	const json: IDataObject = forErrorOutput ? { error: error.message, details } : { error: error.message, ...details };
	return { json, pairedItem: Array.isArray(itemIndex) ? itemIndex.map((item) => ({ item })) : { item: itemIndex } };
}

/**
 * Errors the node raised itself already say what to do; anything
 * else is wrapped with its item (none for a whole-input failure).
 */
function asNodeError(node: INode, error: unknown, itemIndex: number | undefined): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeOperationError(node, error as Error, { itemIndex });
}

/**
 * An operation that takes the whole input at once returns its own output items (paired to the
 * inputs they came from). With Continue On Fail its failure becomes one error item paired to
 * every input item, since no single item caused it.
 */
async function runWholeInput(
	this: IExecuteFunctions,
	operation: WholeInputOperation,
	itemCount: number,
	nodeVersion: number,
): Promise<INodeExecutionData[][]> {
	try {
		return [await operation.executeAll.call(this, nodeVersion)];
	} catch (error) {
		// No item caused it, so it carries no item index (n8n would show "[item 0]").
		const nodeError = asNodeError(this.getNode(), error, undefined);
		if (!this.continueOnFail()) throw nodeError;
		const all = Array.from({ length: itemCount }, (_, item) => item);
		return [[errorItem(nodeError, all, this.getNode().onError === 'continueErrorOutput')]];
	}
}

/**
 * Runs the chosen operation once per input item (or once for all, see `runWholeInput`). Up to `requestsAtOnce` items
 * are in flight at a time; the output keeps the input order either way, and every output item is paired to its input.
 * Without Continue On Fail, the first failure starts no new item: those in flight finish, then the
 * node fails with it.
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
	if (operation.executeAll) return await runWholeInput.call(this, operation, items.length, nodeVersion);
	const perItem = operation;
	// An operation without batching ignores a value an older workflow may still hold.
	const requestsAtOnce =
		perItem.batching === false
			? 1
			: Math.max(1, Math.floor(this.getNodeParameter('batching.requestsAtOnce', 0, 1) as number) || 1);

	const results: INodeExecutionData[][] = new Array(items.length);
	let failure: NodeApiError | NodeOperationError | undefined;
	const runItem = async (itemIndex: number) => {
		try {
			const output = await perItem.execute.call(this, itemIndex, nodeVersion);
			results[itemIndex] = this.helpers.constructExecutionMetaData(this.helpers.returnJsonArray(output), {
				itemData: { item: itemIndex },
			});
		} catch (error) {
			const nodeError = asNodeError(this.getNode(), error, itemIndex);
			if (!this.continueOnFail()) {
				failure ??= nodeError;
				return;
			}
			results[itemIndex] = [errorItem(nodeError, itemIndex, this.getNode().onError === 'continueErrorOutput')];
		}
	};

	// Items start in input order, at most requestsAtOnce at a
	// time; once one has failed, those still queued start nothing.
	const limit = pLimit(requestsAtOnce);
	await Promise.all(
		items.map((_, itemIndex) => limit(async () => (failure === undefined ? await runItem(itemIndex) : undefined))),
	);
	if (failure) throw failure;
	return [results.flat()];
}
