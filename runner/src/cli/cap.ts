/** `cap show|set|clear --from N`: a sending number's frequency cap across campaigns (audience/cap.ts). */
import type { Command } from 'commander';

import * as core from '../core/audience';
import { answer, runs } from './command';

type CapView = Awaited<ReturnType<typeof core.showCap>>;

function describeCap(view: CapView): string {
	const where = { number: "the number's own", default: 'the default (RUNNER_FREQUENCY_CAP)', none: 'no cap is set' }[
		view.source
	];
	const shadowed =
		view.source === 'number' && view.default_policy ? `; the default ${view.default_policy} does not apply to it` : '';
	const policy = view.policy === 'none' ? 'no frequency cap' : `at most ${view.policy}`;
	return `${view.from}: ${policy} per phone across campaigns (${where}${shadowed})`;
}

export function addCapCommands(program: Command): void {
	const cap = program
		.command('cap')
		.description(
			"a sending number's frequency cap: at most N campaign messages per phone per period, " +
				'across campaigns, scheduled ones too',
		);
	const from = (command: Command) =>
		command.requiredOption('--from <number>', 'the sending business number, with country code');

	runs<{ from: string; json?: boolean }>(
		from(
			cap
				.command('show')
				.description('the cap that holds for the number: its own, else the default RUNNER_FREQUENCY_CAP, else none'),
		),
		async ({ context, options }) => {
			const view = await core.showCap(context, options.from);
			return answer(view, () => describeCap(view));
		},
	);

	runs<{ from: string; json?: boolean }>(
		from(
			cap
				.command('set <policy>')
				.description(
					"set the number's own cap, like 1/24h or 1/24h,3/7d (units s, m, h, d), " +
						'or none for no cap whatever the default; applies to the next claim of every campaign',
				),
		),
		async ({ context, args: [policy], options }) => {
			const view = await core.setCap(context, options.from, policy);
			return answer(view, () => describeCap(view));
		},
	);

	runs<{ from: string; json?: boolean }>(
		from(cap.command('clear').description("remove the number's own cap: the default RUNNER_FREQUENCY_CAP holds again")),
		async ({ context, options }) => {
			const view = await core.clearCap(context, options.from);
			return answer(view, () => describeCap(view));
		},
	);
}
