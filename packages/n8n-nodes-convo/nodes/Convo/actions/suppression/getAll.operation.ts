import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runnerAnswer } from '../../transport/runner';
import { returnAllFields } from '../../descriptions/common.description';

/** Entries asked for per request while paging (the runner's most per page). */
const PAGE_SIZE = 1000;

export const description = updateDisplayOptions(
	{ show: { resource: ['suppression'], operation: ['getAll'] } },
	returnAllFields,
);

/** One output item per entry of the suppression list (phone, reason, source, at), newest first. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const wanted = returnAll ? Infinity : (this.getNodeParameter('limit', itemIndex, 50) as number);
	const entries: IDataObject[] = [];
	for (let offset = 0; entries.length < wanted; ) {
		const limit = Math.min(PAGE_SIZE, wanted - entries.length);
		const page = await runnerAnswer(this, 'listSuppressions', { qs: { limit, offset }, itemIndex });
		const items = (page.items ?? []) as IDataObject[];
		entries.push(...items);
		if (items.length < limit) break;
		offset += items.length;
	}
	return entries;
}
