/**
 * Structured logs (pino) on stderr, so stdout stays for a command's result. Secrets are redacted by
 * path wherever they could appear, and no log line is written per successful send at info level.
 */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string, name = 'convo-runner'): Logger {
	return pino(
		{
			name,
			level,
			redact: { paths: ['apiKey', '*.apiKey', 'headers["x-api-key"]', '*.headers["x-api-key"]', 'CONVO_API_KEY', '*.CONVO_API_KEY', 'secret', '*.secret', 'RUNNER_WEBHOOK_KEY', '*.RUNNER_WEBHOOK_KEY', 'RUNNER_TOKEN', '*.RUNNER_TOKEN', 'REDIS_URL', '*.REDIS_URL'], censor: '[secret]' },
		},
		pino.destination({ fd: 2, sync: true }),
	);
}

/**
 * One line per kind of error per window: a Redis outage makes every connection fail every few
 * hundred milliseconds, and the log should say so once, not thousands of times.
 */
export function throttledWarn(log: Logger, windowMs = 30_000): (kind: string, fields: Record<string, unknown>, message: string) => void {
	const last = new Map<string, number>();
	return (kind, fields, message) => {
		const now = Date.now();
		if (now - (last.get(kind) ?? 0) < windowMs) return;
		last.set(kind, now);
		log.warn(fields, message);
	};
}
