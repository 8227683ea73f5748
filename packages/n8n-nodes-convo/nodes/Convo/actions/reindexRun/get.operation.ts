import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';
import { runIdFields, runnerIdValue } from '../campaign/fields';

const properties: INodeProperties[] = [...runIdFields];

export const description = updateDisplayOptions({ show: { resource: ['reindexRun'], operation: ['get'] } }, properties);

/**
 * The run's status: state, counts (read, unchanged, created,
 * updated, deactivated, rejected, failed), rate, ETA, last error.
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const id = runnerIdValue.call(this, 'runId', 'Run ID', itemIndex);
	return (await runnerAnswer(this, 'getReindexRun', { id, itemIndex })) as IDataObject;
}
