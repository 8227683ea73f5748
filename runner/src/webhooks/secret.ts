/**
 * Webhook secrets are derived, never stored: secret = HMAC-SHA256(key, "webhook:" + id), where the
 * key is RUNNER_WEBHOOK_KEY, or one derived from RUNNER_TOKEN. Redis then holds a webhook's URL and
 * events only, and any process with the same key signs a delivery the receiver accepts.
 */
import { createHmac } from 'node:crypto';

import type { RunnerConfig } from '../config';

/** The key webhook secrets derive from, or undefined when this process has neither variable. */
export function webhookKey(config: RunnerConfig): string | undefined {
	if (config.RUNNER_WEBHOOK_KEY) return config.RUNNER_WEBHOOK_KEY;
	if (config.RUNNER_TOKEN)
		return createHmac('sha256', config.RUNNER_TOKEN).update('convo-runner webhook key').digest('hex');
	return undefined;
}

export function webhookSecret(key: string, id: string): string {
	return createHmac('sha256', key).update(`webhook:${id}`).digest('hex');
}

export const NO_WEBHOOK_KEY = 'RUNNER_WEBHOOK_KEY (or RUNNER_TOKEN) must be set: webhook secrets are derived from it';
