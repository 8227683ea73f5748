/**
 * The options of the commands that start work (`campaign create`, `reindex run`) share: the
 * format of their source, the rate, a cron schedule and --wait. Their flags, help text and parsing
 * are written here once; the rules they must meet are core's (the rate's is the contract's
 * `runnerRate`, a zone goes with a pattern in cronSchedules.ts), whose errors name these flags.
 */
import { Option, type Command } from 'commander';

/** What these options parse to. */
export interface RunOptions {
	format?: string;
	rate?: number;
	cron?: string;
	tz?: string;
	wait?: boolean;
	/** Added by runs() (command.ts) to every command. */
	json?: boolean;
}

/** --format of the source `what`, one of `formats`, taken from the source's name when not given. */
export function formatOption(what: string, formats: readonly string[]): Option {
	return new Option('--format <format>', `format of the ${what} (default: from the name)`).choices(formats);
}

/** --rate, taken as a number; core refuses one that is not a whole number within the bounds. */
export function rateOption(description: string): Option {
	return new Option('--rate <n>', description).argParser((value) => Number(value));
}

/** --cron and --tz (each firing re-reads `rereads`), then --wait (follows `follows` until it settles). */
export function addScheduleAndWait(command: Command, what: { rereads: string; follows: string }): Command {
	return command
		.option('--cron <expr>', `repeat on this cron pattern; each firing re-reads the ${what.rereads}`)
		.option('--tz <zone>', 'time zone of --cron (IANA name, default UTC)')
		.option('--wait', `follow the ${what.follows} until it settles`);
}
