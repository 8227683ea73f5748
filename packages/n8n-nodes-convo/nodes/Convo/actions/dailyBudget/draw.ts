/**
 * The option of Message → Send and Template → Send that draws on the runner's daily budget: before
 * the send, the runner is asked to count the recipient (POST /api/budget/customers, the Convo
 * Runner API credential), so campaigns and workflows together stay under the business's daily
 * limit. The limit reached: the item fails, saying when the next customer can be counted, and
 * nothing is sent. A retry of the same item finds its customer counted already (a customer
 * counted within the 24 hours draws nothing more).
 */
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { CountBudgetCustomerBody } from '../../../shared/runnerApi/budget';

import { runnerAnswer } from '../../transport/runner';

/** Top-level, so the credentials' display rule can read it (ConvoV1.ts). */
export const DRAW_ON_BUDGET = 'drawOnDailyBudget';

export function drawOnBudgetField(resource: string, recipientLabel: string): INodeProperties {
	return {
		displayName: 'Draw on the Daily Budget',
		name: DRAW_ON_BUDGET,
		type: 'boolean',
		default: false,
		description:
			"Whether to ask convo-runner to count the recipient in the business's daily messaging budget before " +
			'sending (Convo Runner API credential), so campaigns and workflows together stay under the daily limit. ' +
			'With the limit reached the item fails, nothing is sent, and the error says when the next customer ' +
			'can be counted. ' +
			`The ${recipientLabel} is the customer counted.`,
		displayOptions: { show: { resource: [resource], operation: ['send'] } },
	};
}

/** Counts the recipient's customer when the option is on; throws when the limit is reached now. */
export async function drawOnBudget(this: IExecuteFunctions, itemIndex: number, phone: string): Promise<void> {
	if (!this.getNodeParameter(DRAW_ON_BUDGET, itemIndex, false)) return;
	const body: CountBudgetCustomerBody = { phone };
	const count = await runnerAnswer(this, 'countBudgetCustomer', { body, itemIndex });
	if (count.counted) return;
	throw new NodeOperationError(this.getNode(), 'The daily messaging limit is reached: not sent', {
		itemIndex,
		description:
			"convo-runner's daily budget: no new customer can be counted before " +
			`${count.next_at ?? 'a counted customer drops out'}. ` +
			'Nothing was sent; run the item again after that time, or raise the limit (Daily Budget → Set).',
	});
}
