/** `budget show|set|clear`: the business's daily messaging limit across numbers and campaigns (audience/budget.ts). */
import type { Command } from 'commander';

import * as core from '../core/audience';
import { answer, runs } from './command';

function describeBudget(view: core.BudgetView): string {
	const where = { set: 'set with budget set', default: 'the default RUNNER_DAILY_LIMIT', none: 'no limit is set' }[
		view.source
	];
	if (view.limit === 'unlimited') return `daily messaging limit: unlimited (${where})`;
	const next = view.next_free_at ? `; the next customer can be counted at ${view.next_free_at}` : '';
	return (
		`daily messaging limit: ${view.limit} distinct customers per rolling 24 hours (${where}); ` +
		`${view.used} customers counted, ${view.left} left${next}`
	);
}

export function addBudgetCommands(program: Command): void {
	const budget = program
		.command('budget')
		.description(
			"the business's daily messaging limit: how many distinct customers every campaign and schedule firing " +
				'together may message in a rolling 24 hours',
		);

	runs<{ json?: boolean }>(
		budget.command('show').description('the limit in force, the customers counted and left'),
		async ({ context }) => {
			const view = await core.showBudget(context);
			return answer(view, () => describeBudget(view));
		},
	);

	runs<{ json?: boolean }>(
		budget
			.command('set <limit>')
			.description(
				'set the limit: a whole number of customers (the channel tiers are 250, 2000, 10000, 100000) ' +
					'or unlimited; holds from the next send of every campaign',
			),
		async ({ context, args: [limit] }) => {
			const view = await core.setBudget(context, limit);
			return answer(view, () => describeBudget(view));
		},
	);

	runs<{ json?: boolean }>(
		budget.command('clear').description('forget the limit set: the default RUNNER_DAILY_LIMIT holds again, or none'),
		async ({ context }) => {
			const view = await core.clearBudget(context);
			return answer(view, () => describeBudget(view));
		},
	);
}
