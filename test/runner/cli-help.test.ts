/**
 * What `convo-runner --version` and the help texts tell an operator, read from the real bin: the
 * package's version, every event a webhook can subscribe to (the contract's list, the one the API
 * accepts), and what `campaign status` and `campaign report` show of the delivery funnel. The one
 * runner test that starts the repository's bin itself (the sources through tsx): the others run the
 * test run's bundle.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { RUNNER_EVENTS } from 'convo-contract';

import { REPORT_COLUMNS } from '../../runner/src/core/campaigns';
import { runCli, SOURCE_RUNNER_ARGS } from './support';

jest.setTimeout(600_000);

const env = { PATH: process.env.PATH, HOME: process.env.HOME };
const COMMANDS = {
	version: ['--version'],
	V: ['-V'],
	help: ['--help'],
	webhook: ['webhook', '--help'],
	webhookAdd: ['webhook', 'add', '--help'],
	status: ['campaign', 'status', '--help'],
	report: ['campaign', 'report', '--help'],
};
type Name = keyof typeof COMMANDS;
const runs = {} as Record<Name, Awaited<ReturnType<typeof runCli>>>;

// Each run starts the bin through tsx, seconds apiece on a busy machine: two at a time, read by the tests.
beforeAll(async () => {
	const queue = Object.keys(COMMANDS) as Name[];
	const worker = async () => {
		for (let name = queue.shift(); name; name = queue.shift())
			runs[name] = await runCli(COMMANDS[name], env, 150_000, SOURCE_RUNNER_ARGS);
	};
	await Promise.all([worker(), worker()]);
});

/** Commander wraps help at the terminal's width: one line per text, whatever the width. */
const unwrapped = (text: string) => text.replace(/\s+/g, ' ');

test('--version and -V print the package version', () => {
	const { version } = JSON.parse(readFileSync(join(__dirname, '../../runner/package.json'), 'utf8')) as {
		version: string;
	};
	for (const flag of ['version', 'V'] as const) {
		const run = runs[flag];
		expect({ flag, code: run.code, stdout: run.stdout.trim(), stderr: run.stderr }).toEqual({
			flag,
			code: 0,
			stdout: version,
			stderr: '',
		});
	}
});

test.each(['help', 'webhook', 'webhookAdd'] as const)('%s lists every event a webhook can subscribe to', (name) => {
	const run = runs[name];
	expect(run.code).toBe(0);
	const listed = unwrapped(run.stdout)
		.match(/(?:signed events:|any of:) ([a-z_.]+(?:, [a-z_.]+)*)/)?.[1]
		.split(', ');
	expect(listed).toEqual([...RUNNER_EVENTS]);
});

test('campaign status --help names the delivery funnel', () => {
	const run = runs.status;
	expect(run.code).toBe(0);
	const help = unwrapped(run.stdout);
	for (const stage of [
		'delivery funnel',
		'delivered',
		'read',
		'replied',
		'failed delivery',
		'in flight',
		'failure reason',
	])
		expect(help).toContain(stage);
});

test('campaign report --help lists every column of the report, the delivery columns among them', () => {
	const run = runs.report;
	expect(run.code).toBe(0);
	expect(unwrapped(run.stdout)).toContain(`with the columns ${REPORT_COLUMNS.join(', ')}.`);
	expect(REPORT_COLUMNS).toEqual(
		expect.arrayContaining(['delivery', 'delivered_at', 'read_at', 'replied_at', 'delivery_error']),
	);
});
