/**
 * What every command shares: `--json` (then stdout holds exactly one JSON document, logs go to
 * stderr), a context opened for the command and closed after it, and one way of reporting errors
 * (exit 1; with --json the error is also the document: { "error": "..." }).
 */
import { Option, type Command } from 'commander';

import { ConfigError, loadConfig, type RunnerConfig } from '../config';
import type { RunnerContext } from '../context';
import { UserError } from '../errors';
import { loggerFor } from '../log';
import {
	CLIENT_READY_MS,
	closeContext,
	isRedisUnavailable,
	openContext,
	RedisSettingsError,
	RedisUnavailable,
} from '../runtime';

export interface Io {
	json: boolean;
}

/** What a command prints: `value` with --json, else `text()`. */
export interface Answer {
	value: unknown;
	text: () => string;
}

export const answer = (value: unknown, text: () => string): Answer => ({ value, text });

const pluralRules = new Intl.PluralRules('en');
/** `n` with the word its number takes: "1 recipient", "2 recipients" (`many` when the plural is not word + s). */
export const plural = (n: number, one: string, many = `${one}s`): string =>
	`${n} ${pluralRules.select(n) === 'one' ? one : many}`;

/**
 * A duration an operator reads at a glance, as the console says it: "45 s", "12 min 5 s", "3 h 20 min";
 * each part whole and never rounded up (7,170 s is "1 h 59 min", not "1 h 60 min").
 */
export function spoken(seconds: number): string {
	const whole = Math.floor(seconds);
	if (whole < 60) return `${whole} s`;
	if (whole < 3600) return `${Math.floor(whole / 60)} min${whole % 60 ? ` ${whole % 60} s` : ''}`;
	const minutes = Math.floor((whole % 3600) / 60);
	return `${Math.floor(whole / 3600)} h${minutes ? ` ${minutes} min` : ''}`;
}

function print(io: Io, value: unknown, human: () => string): void {
	process.stdout.write(io.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

export function fail(io: Io, error: unknown): void {
	const unavailable = isRedisUnavailable(error) && !(error instanceof RedisUnavailable);
	const text = unavailable ? `Redis does not answer (${(error as Error).message})` : (error as Error).message;
	const known =
		error instanceof UserError ||
		error instanceof ConfigError ||
		error instanceof RedisSettingsError ||
		isRedisUnavailable(error);
	const message = known ? text : `unexpected error: ${(error as Error).stack ?? String(error)}`;
	if (io.json) process.stdout.write(`${JSON.stringify({ error: text })}\n`);
	process.stderr.write(`convo-runner: ${message}\n`);
	process.exitCode = 1;
}

/** What a command's work gets: its context, --json, its positional arguments and its options. */
export interface Invocation<O> {
	context: RunnerContext;
	io: Io;
	args: string[];
	options: O;
}

/**
 * Adds --json to `command` (last, after its own options) and makes its action: `check` run on the
 * options first (rules that need no connection, so a wrong option is named even where Redis is down),
 * a context opened (`withService`: also the Convo service, for commands that ask it, or for some of
 * their options), `work` run in it, its answer printed, the context closed, and any error reported
 * the one way.
 */
// Commander's parsed options are untyped; each command reads its own.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function runs<O extends { json?: boolean; verbose?: boolean } = Record<string, any>>(
	command: Command,
	work: (invocation: Invocation<O>) => Promise<Answer | void>,
	settings: {
		withService?: boolean | ((options: O) => boolean);
		check?: (options: O, config: RunnerConfig) => void;
	} = {},
): Command {
	return command
		.addOption(new Option('--json', 'print one JSON document on stdout'))
		.addOption(new Option('--verbose', 'on a terminal, show the log lines (info and up) too; without it only warnings'))
		.action(async (...params: unknown[]) => {
			// commander calls an action with the positional arguments, then the options, then the command.
			const options = params.at(-2) as O;
			const args = params.slice(0, -2) as string[];
			const io = { json: Boolean(options.json) };
			let context: RunnerContext | undefined;
			try {
				const config = loadConfig();
				settings.check?.(options, config);
				const log = loggerFor({
					level: config.LOG_LEVEL,
					levelAsked: process.env.LOG_LEVEL !== undefined,
					json: io.json,
					verbose: Boolean(options.verbose),
					command: true,
				});
				const withService =
					typeof settings.withService === 'function' ? settings.withService(options) : (settings.withService ?? false);
				context = await openContext(config, log, { withService, client: { waitMs: CLIENT_READY_MS } });
				const result = await work({ context, io, args, options });
				if (result) print(io, result.value, result.text);
			} catch (error) {
				fail(io, error);
			} finally {
				if (context) await closeContext(context);
			}
		});
}
