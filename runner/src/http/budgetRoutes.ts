/**
 * The daily messaging budget's routes of the control API: thin over its door in core/ (the limit
 * shown, set and cleared, as `convo-runner budget` does; the customer of one send counted, as the
 * Convo node's sends ask when they draw on the budget).
 */
import { countBudgetCustomerBody, parsePhoneNumber, setBudgetBody } from 'convo-contract';
import type { RunnerContext } from '../context';
import * as audience from '../core/audience';
import { at, type RouteTable } from './routes';

const BUDGET_TEXT = '{ limit, source: set|default|none, used, left, next_free_at, span_ms }';

export function budgetRoutes(routes: RouteTable, context: RunnerContext): void {
	routes.add(
		{
			...at('getBudget'),
			tag: 'budget',
			summary:
				"The business's daily messaging limit (distinct customers a rolling 24 hours, every number): " +
				'the one set, else RUNNER_DAILY_LIMIT, else none; the customers counted and left',
			success: [200, BUDGET_TEXT],
		},
		async () => audience.showBudget(context),
	);
	routes.add(
		{
			...at('setBudget'),
			tag: 'budget',
			summary: 'Set the daily limit: { limit: 250 } (1 to 1,000,000 customers) or { limit: "unlimited" }',
			body: setBudgetBody,
			success: [200, BUDGET_TEXT],
		},
		async ({ body }) => audience.setBudget(context, body.limit, 'limit'),
	);
	routes.add(
		{
			...at('clearBudget'),
			tag: 'budget',
			summary: 'Clear the limit set: RUNNER_DAILY_LIMIT holds again, or none',
			success: [200, BUDGET_TEXT],
		},
		async () => audience.clearBudget(context),
	);
	routes.add(
		{
			...at('countBudgetCustomer'),
			tag: 'budget',
			summary:
				'Count the customer of one send to { phone } under the daily limit: counted (new_customer: false when ' +
				'counted already or no limit is set), or not before next_at; the caller sends only when counted',
			body: countBudgetCustomerBody,
			success: [200, '{ phone, counted, new_customer, next_at }'],
		},
		async ({ body }) => {
			const count = await audience.countCustomer(context, body.phone, 'phone');
			// Checked by the count: a phone that reaches here parses.
			const parsed = parsePhoneNumber(body.phone);
			const phone = parsed.ok ? parsed.digits : body.phone;
			if (count.counted) return { phone, counted: true, new_customer: count.isNew, next_at: null };
			return { phone, counted: false, new_customer: false, next_at: new Date(count.nextAt).toISOString() };
		},
	);
}
