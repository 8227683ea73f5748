/**
 * convo-runner: the command line, a thin client of the doors in core/; one module per command group, and
 * command.ts for what they share. Every command takes --json: then stdout holds exactly one JSON
 * document (logs go to stderr), exit 0 on success (including "nothing to do"), 1 on an error,
 * which is also the JSON document: { "error": "..." }.
 */
import { Command } from 'commander';

import { RUNNER_VERSION } from '../core/runners';
import { addCampaignCommands } from './campaign';
import { addBudgetCommands } from './budget';
import { addCapCommands } from './cap';
import { fail } from './command';
import { addReindexCommands } from './reindex';
import { addServeCommands } from './serve';
import { addSuppressionCommands } from './suppression';
import { addWebhookCommands } from './webhook';

export function buildProgram(): Command {
	const program = new Command('convo-runner')
		.description(
			'Template campaigns (never twice, never lost, one rate per number) and search reindexing for Convo on BullMQ',
		)
		.showHelpAfterError();
	program.version(RUNNER_VERSION, '-V, --version', 'print the version of convo-runner');
	addServeCommands(program);
	addCampaignCommands(program);
	addCapCommands(program);
	addBudgetCommands(program);
	addReindexCommands(program);
	addWebhookCommands(program);
	addSuppressionCommands(program);
	return program;
}

/**
 * A reader that stops reading (`campaign report ID | head`) closes the pipe: EPIPE on stdout.
 * The reader chose to stop, so the command ends there, quietly and with 0, as `head` expects;
 * anything else on stdout is a real failure and is reported.
 */
function quietOnClosedStdout(): void {
	process.stdout.on('error', (error: NodeJS.ErrnoException) => {
		if (error.code === 'EPIPE') process.exit(0);
		process.stderr.write(`convo-runner: writing to stdout failed: ${error.message}\n`);
		process.exit(1);
	});
}

/** The bin's entry: parses `argv` and reports a failure the way every command does. */
export function run(argv: string[]): Promise<unknown> {
	quietOnClosedStdout();
	return buildProgram()
		.parseAsync(argv)
		.catch((error) => fail({ json: argv.includes('--json') }, error));
}

if (require.main === module) void run(process.argv);
