import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { SetBudgetBody } from '../../../shared/runnerApi/budget';

import { runnerAnswer } from '../../transport/runner';

const show = { resource: ['dailyBudget'], operation: ['set'] };

const properties: INodeProperties[] = [
	{
		displayName: 'Limit',
		name: 'limitType',
		type: 'options',
		options: [
			{
				name: 'Customers per 24 Hours',
				value: 'count',
				description: "A number of distinct customers, as the channel's messaging limit of the business",
			},
			{ name: 'Unlimited', value: 'unlimited', description: 'No daily limit: nothing is counted' },
		],
		default: 'count',
		description: 'Whether the business has a daily limit',
		displayOptions: { show },
	},
	{
		displayName: 'Customers per 24 Hours',
		name: 'dailyLimit',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 1_000_000, numberPrecision: 0 },
		default: 250,
		description:
			'Distinct customers the business may start conversations with in a rolling 24 hours, across its numbers: ' +
			"the channel's messaging limit (250, 2,000, 10,000 or 100,000)",
		displayOptions: { show: { ...show, limitType: ['count'] } },
	},
];

export const description = properties;

export const apiFields: Readonly<Record<string, string>> = { limit: 'dailyLimit' };

/** The runner's 400 about the limit names the field as the user sees it. */
const labelOf = (apiField: string) => (apiField === 'limit' ? 'Customers per 24 Hours' : undefined);

/** The budget as the runner holds it after the change: from the next send of every campaign and workflow. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const unlimited = this.getNodeParameter('limitType', itemIndex, 'count') === 'unlimited';
	const body: SetBudgetBody = {
		limit: unlimited ? 'unlimited' : Number(this.getNodeParameter('dailyLimit', itemIndex)),
	};
	return (await runnerAnswer(this, 'setBudget', { body: body as IDataObject, labelOf, itemIndex })) as IDataObject;
}
