/**
 * The Reference pages against the code they describe. The generated ones (scripts/docs/reference.ts)
 * must be exactly what the script writes now, and name every command, option, variable and
 * operation; the control API's document must pass `redocly lint`; the hand-written events and limits
 * pages must name every event type and every cap with its default.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
	DELIVERY_HEADER,
	EVENT_HEADER,
	RUNNER_EVENTS,
	SIGNATURE_HEADER,
	SIGNATURE_TOLERANCE_SECONDS,
} from 'convo-contract';

import type { ReferenceFacts } from '../../scripts/docs/reference';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The pages as the script writes them now, and the commands, settings and document they show. */
let facts: ReferenceFacts;
const settings = () => facts.settings;

beforeAll(() => {
	const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/docs/reference.ts'), '--facts'], {
		cwd: ROOT,
		encoding: 'utf8',
		maxBuffer: 64 * 1024 * 1024,
		timeout: 120_000,
	});
	if (run.status !== 0) throw new Error(`scripts/docs/reference.ts failed: ${run.stderr}`);
	facts = JSON.parse(run.stdout) as ReferenceFacts;
}, 150_000);

test('every generated page is what npm run docs:reference writes now', () => {
	const stale = Object.entries(facts.pages)
		.filter(([path, text]) => read(path) !== text)
		.map(([path]) => `${path} is stale: run npm run docs:reference`);
	expect(stale).toEqual([]);
});

test('the command line page shows every command and every option', () => {
	const text = read('docs/reference/cli.md');
	const missing = facts.commands.flatMap(({ name, options }) => [
		...(text.includes(`## ${name}\n`) ? [] : [name]),
		...options.filter((flags) => !text.includes(flags)).map((flags) => `${name} ${flags}`),
	]);
	expect(missing).toEqual([]);
});

test('the configuration page names every variable, with its default', () => {
	const text = read('docs/reference/configuration.md');
	const missing = settings().flatMap((setting) =>
		[setting.name, ...setting.aliases]
			.filter((name) => !text.includes(`\`${name}\``))
			.concat(setting.defaultText && !text.includes(`| \`${setting.defaultText}\` |`) ? [setting.name] : []),
	);
	expect(missing).toEqual([]);
	// Every setting describes itself in config.ts (its comment), so no row of the table is empty.
	expect(
		settings()
			.filter((setting) => setting.description === '')
			.map((setting) => setting.name),
	).toEqual([]);
});

test('the control API page shows every operation of the document', () => {
	const text = read('docs/reference/control-api.md');
	const operations = Object.values(facts.openApi.paths).flatMap((methods) => Object.values(methods));
	expect(operations.filter((operation) => !text.includes(`\`${operation.operationId}\``))).toEqual([]);
});

test('the OpenAPI document passes redocly lint, operationIds and answer schemas included', () => {
	const document = facts.openApi;
	const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
	const withoutAnswer = operations
		.filter((operation) =>
			Object.entries(operation.responses).some(
				([status, response]) => Number(status) < 300 && status !== '204' && !response.content,
			),
		)
		.map((operation) => operation.operationId);
	expect(withoutAnswer).toEqual([]);
	const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
	try {
		const file = join(dir, 'openapi.json');
		writeFileSync(file, JSON.stringify(document));
		const lint = spawnSync(join(ROOT, 'node_modules', '.bin', 'redocly'), ['lint', '--format', 'stylish', file], {
			encoding: 'utf8',
			// No usage report leaves the machine, and no update check.
			env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
			timeout: 60_000,
		});
		expect({ status: lint.status, output: lint.status === 0 ? '' : `${lint.stdout}${lint.stderr}` }).toEqual({
			status: 0,
			output: '',
		});
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test('the events page shows every event type, the delivery headers and the signature tolerance', () => {
	const text = read('docs/reference/events.md');
	const named = [...RUNNER_EVENTS.map((type) => `## \`${type}\``), SIGNATURE_HEADER, EVENT_HEADER, DELIVERY_HEADER];
	expect(named.filter((name) => !text.includes(name))).toEqual([]);
	expect(text).toContain(`${SIGNATURE_TOLERANCE_SECONDS} seconds`);
});

test("the limits page names every cap with the config schema's default", () => {
	const text = read('docs/reference/limits.md');
	// RUNNER_MAX_LATENESS is how late a schedule's firing may be taken up: no cap on what callers send.
	const caps = settings().filter(
		(setting) =>
			(setting.name.startsWith('RUNNER_MAX_') || setting.name.startsWith('RUNNER_UPLOAD_')) &&
			setting.name !== 'RUNNER_MAX_LATENESS',
	);
	const wrong = caps
		.filter((setting) => !text.includes(`\`${setting.name}\` (\`${setting.defaultText}\``))
		.map((setting) => `${setting.name} (${setting.defaultText})`);
	expect(wrong).toEqual([]);
});
