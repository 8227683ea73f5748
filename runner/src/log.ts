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
			redact: { paths: ['apiKey', '*.apiKey', 'headers["x-api-key"]', '*.headers["x-api-key"]', 'CONVO_API_KEY', '*.CONVO_API_KEY'], censor: '[secret]' },
		},
		pino.destination({ fd: 2, sync: true }),
	);
}
