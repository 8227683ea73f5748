import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

export type ConvoResource =
	| 'message'
	| 'template'
	| 'contact'
	| 'conversation'
	| 'searchItem'
	| 'agent'
	| 'campaign'
	| 'reindexRun'
	| 'suppression'
	| 'dailyBudget';

/**
 * What one operation file exports: its fields, and what it does for one input item (`execute`) or,
 * for an operation that takes the whole input at once (Campaign → Create: all items become ONE
 * campaign), for all of them (`executeAll`, which returns output items with their pairedItem).
 * `nodeVersion` is the node's typeVersion, for an operation whose behaviour changes in a later version.
 */
export type ConvoOperation = PerItemOperation | WholeInputOperation;

interface OperationBase {
	description: INodeProperties[];
	/**
	 * Which parameter fills which API field (`{ field_value: 'fieldValue' }`; a parameter inside a
	 * collection as `additionalFields.assignedUser`), so errors name the field by the label the
	 * user sees.
	 */
	apiFields?: Readonly<Record<string, string>>;
}

export interface PerItemOperation extends OperationBase {
	/**
	 * false: its items run one after another and Batching → Requests at Once is not offered (Campaign
	 * → Get Report: each item is a whole report read page by page, so parallel reports only add memory).
	 */
	batching?: false;
	execute(this: IExecuteFunctions, itemIndex: number, nodeVersion: number): Promise<IDataObject | IDataObject[]>;
	executeAll?: undefined;
}

export interface WholeInputOperation extends OperationBase {
	executeAll(this: IExecuteFunctions, nodeVersion: number): Promise<INodeExecutionData[]>;
	execute?: undefined;
	batching?: undefined;
}
