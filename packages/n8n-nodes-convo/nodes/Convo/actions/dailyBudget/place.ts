/**
 * The option of Message → Send and Template → Send that draws on the runner's daily budget: before
 * the send, the runner is asked for a place for the recipient (POST /api/budget/places, the Convo
 * Runner API credential), so campaigns and workflows together stay under the business's daily
 * limit. No place: the item fails, saying when the next one frees, and nothing is sent. A retry of
 * the same item finds its place held (a phone messaged in the window draws nothing more).
 */
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { TakeBudgetPlaceBody } from '../../../shared/runnerApi/budget';

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
			"Whether to ask convo-runner for a place in the business's daily messaging budget before sending " +
			'(Convo Runner API credential), so campaigns and workflows together stay under the daily limit. ' +
			'With no place left the item fails, nothing is sent, and the error says when the next place frees. ' +
			`The ${recipientLabel} is the customer counted.`,
		displayOptions: { show: { resource: [resource], operation: ['send'] } },
	};
}

/** Takes the recipient's place when the option is on; throws when the budget has none now. */
export async function drawOnBudget(this: IExecuteFunctions, itemIndex: number, phone: string): Promise<void> {
	if (!this.getNodeParameter(DRAW_ON_BUDGET, itemIndex, false)) return;
	const body: TakeBudgetPlaceBody = { phone };
	const place = await runnerAnswer(this, 'takeBudgetPlace', { body, itemIndex });
	if (place.taken) return;
	throw new NodeOperationError(this.getNode(), 'The daily messaging limit is reached: not sent', {
		itemIndex,
		description:
			`convo-runner's daily budget has no place for a new customer until ${place.next_at ?? 'a place frees'}. ` +
			'Nothing was sent; run the item again after that time, or raise the limit (Daily Budget → Set).',
	});
}
