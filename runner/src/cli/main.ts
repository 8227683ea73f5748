/**
 * convo-runner: the command line, a thin client of core.ts; one module per command group, and
 * command.ts for what they share. Every command takes --json: then stdout holds exactly one JSON
 * document (logs go to stderr), exit 0 on success (including "nothing to do"), 1 on an error,
 * which is also the JSON document: { "error": "..." }.
 */
import { Command } from 'commander';

import { addCampaignCommands } from './campaign';
import { fail } from './command';
import { addReindexCommands } from './reindex';
import { addServeCommands } from './serve';
import { addWebhookCommands } from './webhook';

export function buildProgram(): Command {
	const program = new Command('convo-runner').description('Template campaigns (never twice, never lost, one rate per number) and search reindexing for Convo on BullMQ').showHelpAfterError();
	addServeCommands(program);
	addCampaignCommands(program);
	addReindexCommands(program);
	addWebhookCommands(program);
	return program;
}

/** The bin's entry: parses `argv` and reports a failure the way every command does. */
export function run(argv: string[]): Promise<unknown> {
	return buildProgram()
		.parseAsync(argv)
		.catch((error) => fail({ json: argv.includes('--json') }, error));
}

if (require.main === module) void run(process.argv);
