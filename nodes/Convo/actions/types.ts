import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

export type ConvoResource = 'message' | 'template' | 'contact' | 'conversation' | 'searchItem' | 'agent';

/**
 * What one operation file exports: its fields, and what it does for one input item. `nodeVersion`
 * is the node's typeVersion, for an operation whose behaviour changes in a later version.
 */
export interface ConvoOperation {
	description: INodeProperties[];
	execute(this: IExecuteFunctions, itemIndex: number, nodeVersion: number): Promise<IDataObject | IDataObject[]>;
}
