// The 120-column rule `npm run lint` holds production code to (max-len in eslint.config.mjs, a tab
// counting 2 columns as in Prettier), shown to bite on planted lines of 130: code and a comment, in a
// runner file, in node pack files (held from the root config: the pack's own eslint.config.mjs must
// stay n8n's) and in the sandbox, and not in a test file. runner/src/lua has its own check
// (noLuaInTypeScript.test.ts).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

interface Message {
	ruleId: string | null;
	line: number;
	message: string;
}

/** The max-len messages `npm run lint:ts` would give `code` saved at `path`, as line: message. */
function lineLengthMessages(path: string, code: string): string[] {
	const lint = spawnSync(
		join(ROOT, 'node_modules/.bin/eslint'),
		['--config', 'eslint.config.mjs', '--format', 'json', '--stdin', '--stdin-filename', path],
		{ cwd: ROOT, encoding: 'utf8', input: code, timeout: 60_000 },
	);
	const [result] = JSON.parse(lint.stdout) as Array<{ messages: Message[] }>;
	return result.messages
		.filter((message) => message.ruleId === 'max-len')
		.map((message) => `${message.line}: ${message.message}`);
}

const lines = [
	`export const planted = '${'x'.repeat(104)}';`,
	`// ${'y'.repeat(127)}`,
	`export const fits = '${'z'.repeat(97)}';`,
	`\t\t// ${'w'.repeat(113)}`,
];
const code = `${lines.join('\n')}\n`;

test('the planted lines are 130 columns, and those that fit exactly 120 (a tab counting 2)', () => {
	expect(lines.map((line) => line.replace(/\t/g, '  ').length)).toEqual([130, 130, 120, 120]);
});

test.each([
	'runner/src/campaigns/planted.ts',
	'packages/n8n-nodes-convo/nodes/Convo/actions/campaign/planted.ts',
	'packages/n8n-nodes-convo/credentials/Planted.credentials.ts',
	'sandbox/src/planted.ts',
])('a 130-column line of code and a 130-column comment fail lint in %s', (path) => {
	expect(lineLengthMessages(path, code)).toEqual([
		'1: This line has a length of 130. Maximum allowed is 120.',
		'2: This line has a comment length of 130. Maximum allowed is 120.',
	]);
});

test('a test file is not held to 120 columns', () => {
	expect(lineLengthMessages('test/runner/planted.test.ts', code)).toEqual([]);
});

test('npm run lint:ts lints the production folders the rule names, the node pack among them', () => {
	const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
		scripts: Record<string, string>;
	};
	const linted = scripts['lint:ts'].split(/\s+/);
	for (const path of [
		'runner/src',
		'runner/scripts',
		'sandbox/src',
		'packages/contract',
		'packages/n8n-nodes-convo/nodes',
		'packages/n8n-nodes-convo/credentials',
		'scripts',
		'compose',
		'eslint.config.mjs',
		'jest.config.js',
		'.dependency-cruiser.cjs',
	])
		expect(linted).toContain(path);
});
