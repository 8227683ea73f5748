import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

export type ConvoResource = 'message' | 'template' | 'contact' | 'conversation' | 'searchItem' | 'agent';

/**
 * What one operation file exports: its fields, and what it does for one input item. `nodeVersion`
 * is the node's typeVersion, for an operation whose behaviour changes in a later version.
 */
export interface ConvoOperation {
	description: INodeProperties[];
	/**
	 * Which parameter fills which API field (`{ field_value: 'fieldValue' }`; a parameter inside a
	 * collection as `additionalFields.assignedUser`), so errors name the field by the label the
	 * user sees.
	 */
	apiFields?: Readonly<Record<string, string>>;
	execute(this: IExecuteFunctions, itemIndex: number, nodeVersion: number): Promise<IDataObject | IDataObject[]>;
}
