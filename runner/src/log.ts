/**
 * Structured logs (pino) on stderr, so stdout stays for a command's result. Secrets are redacted by
 * path wherever they could appear, and no log line is written per successful send at info level.
 */
import pino from 'pino';

import { SECRET_SETTINGS } from './config';

export type Logger = pino.Logger;

/** What pino writes as `[secret]`: the service's key and webhook secrets by name, and every secret setting. */
const REDACTED_PATHS = [
	'apiKey',
	'*.apiKey',
	'headers["x-api-key"]',
	'*.headers["x-api-key"]',
	'secret',
	'*.secret',
	...SECRET_SETTINGS.flatMap((name) => [name, `*.${name}`]),
];

/** `human`: one short line per record (a terminal); `destination`: where the lines go instead of stderr. */
export function createLogger(
	level: string,
	name = 'convo-runner',
	options: { human?: boolean; destination?: pino.DestinationStream } = {},
): Logger {
	return pino(
		{
			name,
			level,
			redact: { paths: REDACTED_PATHS, censor: '[secret]' },
		},
		options.destination ?? (options.human ? humanLines(name) : pino.destination({ fd: 2, sync: true })),
	);
}

/** pino's standard fields, which a human line leaves out. */
const STANDARD_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

/**
 * A destination for a person at a terminal: each record as one short line on stderr, `name:
 * warning: message (field=value …)`. It is handed pino's serialized line, so redaction has already
 * happened; the JSON is only read back, never the objects logged.
 */
function humanLines(name: string): { write(line: string): void } {
	return {
		write(line: string) {
			const record = JSON.parse(line) as Record<string, unknown>;
			const level = Number(record.level);
			const label = level >= 50 ? 'error: ' : level >= 40 ? 'warning: ' : '';
			const fields = Object.entries(record)
				.filter(([key]) => !STANDARD_FIELDS.has(key))
				.map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
			process.stderr.write(
				`${name}: ${label}${String(record.msg ?? '')}${fields.length ? ` (${fields.join(', ')})` : ''}\n`,
			);
		},
	};
}

/**
 * How a process logs where it runs. JSON lines stay for machines: with --json, or when stderr is
 * not a terminal (pipes, files, containers). On a terminal the lines are human ones, and a
 * command (not a runner process, whose log is its output) is quiet but for warnings, unless
 * --verbose or an explicit LOG_LEVEL asks for more.
 */
export function loggerFor(how: {
	level: string;
	levelAsked: boolean;
	json?: boolean;
	verbose?: boolean;
	command: boolean;
}): Logger {
	const human = Boolean(process.stderr.isTTY) && !how.json;
	if (!human) return createLogger(how.level);
	const level = how.levelAsked ? how.level : how.verbose ? 'info' : how.command ? 'warn' : how.level;
	return createLogger(level, 'convo-runner', { human: true });
}

/**
 * One line per kind of error per period: a Redis outage makes every connection fail every few
 * hundred milliseconds, and the log should say so once, not thousands of times.
 */
export function throttledWarn(
	log: Logger,
	periodMs = 30_000,
): (kind: string, fields: Record<string, unknown>, message: string) => void {
	const last = new Map<string, number>();
	return (kind, fields, message) => {
		const now = Date.now();
		if (now - (last.get(kind) ?? 0) < periodMs) return;
		last.set(kind, now);
		log.warn(fields, message);
	};
}
