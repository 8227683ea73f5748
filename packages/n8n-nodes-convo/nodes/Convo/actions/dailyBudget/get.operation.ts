import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';

export const description: INodeProperties[] = [];

export const apiFields: Readonly<Record<string, string>> = {};

/** The limit in force (set, default or none), the places used and left, and when the next one frees. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	return (await runnerAnswer(this, 'getBudget', { itemIndex })) as IDataObject;
}
