import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';

export const description: INodeProperties[] = [];

export const apiFields: Readonly<Record<string, string>> = {};

/** The limit in force (set, default or none), the customers counted and left, and when the next can be counted. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	return (await runnerAnswer(this, 'getBudget', { itemIndex })) as IDataObject;
}
