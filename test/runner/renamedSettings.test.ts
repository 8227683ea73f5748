/**
 * Settings renamed so that "window" keeps one sense, the send window (docs/architecture.md,
 * Glossary): the old names still work, and the new name wins when both are set.
 */
import { loadConfig, RENAMED_SETTINGS } from '../../runner/src/config';

test('RUNNER_REPLY_WINDOW and RUNNER_AUTH_FAILURE_WINDOW still set the reply period and the auth failure period', () => {
	const config = loadConfig({ RUNNER_REPLY_WINDOW: '24h', RUNNER_AUTH_FAILURE_WINDOW: '5m' });
	expect(config.RUNNER_REPLY_PERIOD).toBe(24 * 3_600_000);
	expect(config.RUNNER_AUTH_FAILURE_PERIOD).toBe(5 * 60_000);
	expect(RENAMED_SETTINGS).toEqual({
		RUNNER_AUTH_FAILURE_PERIOD: 'RUNNER_AUTH_FAILURE_WINDOW',
		RUNNER_REPLY_PERIOD: 'RUNNER_REPLY_WINDOW',
	});
});

test('the new name wins over the old one; neither set, the defaults hold', () => {
	const both = loadConfig({
		RUNNER_REPLY_PERIOD: '48h',
		RUNNER_REPLY_WINDOW: '24h',
		RUNNER_AUTH_FAILURE_PERIOD: '10m',
		RUNNER_AUTH_FAILURE_WINDOW: '5m',
	});
	expect(both.RUNNER_REPLY_PERIOD).toBe(48 * 3_600_000);
	expect(both.RUNNER_AUTH_FAILURE_PERIOD).toBe(10 * 60_000);
	const neither = loadConfig({});
	expect(neither.RUNNER_REPLY_PERIOD).toBe(72 * 3_600_000);
	expect(neither.RUNNER_AUTH_FAILURE_PERIOD).toBe(15 * 60_000);
});

test('a wrong value under an old name is reported under the name the user set', () => {
	expect(() => loadConfig({ RUNNER_REPLY_WINDOW: 'three days' })).toThrow(
		'RUNNER_REPLY_WINDOW (the old name of RUNNER_REPLY_PERIOD) must be a duration',
	);
	expect(() => loadConfig({ RUNNER_AUTH_FAILURE_PERIOD: 'soon' })).toThrow(
		'RUNNER_AUTH_FAILURE_PERIOD must be a duration',
	);
});
