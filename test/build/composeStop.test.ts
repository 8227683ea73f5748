/**
 * compose.yaml gives the runner's processes longer to stop than they take: a stop waits up to
 * RUNNER_SHUTDOWN_DEADLINE for the sends in flight, and a runtime's grace period ending first
 * turns it into a SIGKILL (Docker's default is 10 s).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { parse } from 'yaml';

import { CONFIG_SCHEMA } from '../../runner/src/config';

interface Service {
	command?: string[];
	stop_grace_period?: string;
}

/** Compose's duration (e.g. `30s`, `1m30s`) in ms. */
function composeMs(text: string): number {
	const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
	let total = 0;
	for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) total += Number(amount) * units[unit];
	return total;
}

test('every runner service in compose.yaml stops with a grace period longer than RUNNER_SHUTDOWN_DEADLINE', () => {
	const compose = parse(readFileSync(join(__dirname, '..', '..', 'compose.yaml'), 'utf8')) as {
		services: Record<string, Service>;
	};
	const deadline = CONFIG_SCHEMA.shape.RUNNER_SHUTDOWN_DEADLINE.parse(undefined) as number;
	const runners = Object.entries(compose.services).filter(([, service]) =>
		['start', 'worker'].includes(service.command?.[0] ?? ''),
	);
	expect(runners.map(([name]) => name).sort()).toEqual(['runner', 'worker']);
	for (const [name, service] of runners)
		expect([name, composeMs(service.stop_grace_period ?? '10s') > deadline]).toEqual([name, true]);
});
