/**
 * The CLI as an operator meets it day to day (issue 21): a followed campaign that fails or is
 * cancelled exits non-zero and its bar shows what was sent; a spreadsheet's semicolon CSV is read;
 * `report | head` ends quietly; create says which rows it rejected; Ctrl-C of --wait says the
 * campaign goes on; a row with the wrong cell count keeps its phone. Real processes (a pseudo
 * terminal from script(1) where the bar matters), real Redis, the sandbox.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { campaignStatus, cancel, createCampaign } from '../../runner/src/core/campaigns';
import { liveRunners } from '../../runner/src/core/runners';
import { positionalTemplate, RUNNER_ARGS, runCli, useRunnerUnderTest, waitFor, writeRecipientsCsv } from './support';

jest.setTimeout(120_000);

const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '10' });
const template = () => positionalTemplate(runner.business).id;
const from = () => `+${runner.business.phoneNumbers[0]}`;
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const UNKNOWN_TEMPLATE = '00000000-0000-4000-8000-00000000abcd';

function writeFile(name: string, text: string): string {
	const path = join(mkdtempSync(join(tmpdir(), 'convo-cli-')), name);
	writeFileSync(path, text);
	return path;
}

/** The CLI started in the background, its output kept, so a test can act while it waits. */
function startCli(args: string[]) {
	const child = spawn(process.execPath, [...RUNNER_ARGS, ...args], {
		env: runner.env,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let stdout = '';
	let stderr = '';
	child.stdout.on('data', (chunk) => (stdout += String(chunk)));
	child.stderr.on('data', (chunk) => (stderr += String(chunk)));
	const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
	return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

const idOf = (text: string) => /campaign (\w+): \d+ recipients/.exec(text)?.[1];

beforeAll(() => {
	runner.spawnWorker();
});

test('--wait on a terminal: a campaign that fails exits 2 with its reason, and the bar shows 0% sent, not a full bar', async () => {
	const { path } = writeRecipientsCsv(5, { seed: 60 });
	const args = [
		...RUNNER_ARGS,
		'campaign',
		'create',
		'--template',
		UNKNOWN_TEMPLATE,
		'--from',
		from(),
		'--recipients',
		path,
		'--rate',
		'100',
		'--wait',
	];
	// script(1) gives the CLI a terminal (the bar is drawn only on one) and exits with its code (-e).
	const command = [process.execPath, ...args].map((arg) => `'${arg}'`).join(' ');
	const result = spawnSync('script', ['-qec', command, '/dev/null'], {
		env: { ...runner.env, TERM: 'xterm' },
		encoding: 'utf8',
		timeout: 90_000,
	});
	const output = result.stdout;
	expect(result.status).toBe(2);
	expect(output).toMatch(/ended failed: 404: .*no template with id/);
	expect(output).toMatch(/ 0% \| sent 0 failed 0 unknown 0 not sent 5/);
	expect(output).not.toContain('100%');
});

test('--wait --json: the document of a campaign that ended failed says failed at the top as in its status, not the state it had at its create', async () => {
	const { path } = writeRecipientsCsv(5, { seed: 64 });
	const created = await runCli(
		[
			'campaign',
			'create',
			'--template',
			UNKNOWN_TEMPLATE,
			'--from',
			from(),
			'--recipients',
			path,
			'--rate',
			'100',
			'--wait',
			'--json',
		],
		runner.env,
	);
	expect(created.code).toBe(2);
	const document = JSON.parse(created.stdout);
	expect(document).toMatchObject({
		kind: 'campaign',
		state: 'failed',
		status: { state: 'failed', last_error: expect.stringMatching(/^404: /) },
	});
	expect(document.state).toBe(document.status.state);
});

test('--wait: a campaign cancelled while it is followed exits 3 and says so; its JSON status is still printed', async () => {
	const { path } = writeRecipientsCsv(40, { seed: 61 });
	const cli = startCli([
		'campaign',
		'create',
		'--template',
		template(),
		'--from',
		from(),
		'--recipients',
		path,
		'--rate',
		'1',
		'--wait',
		'--json',
	]);
	const id = await waitFor('the campaign id on stderr', async () => idOf(cli.stderr()), 30_000);
	await waitFor('a first send', async () => (await campaignStatus(runner.context, id)).counts.sent > 0, 30_000);
	await cancel(runner.context, id);
	expect(await cli.exited).toBe(3);
	expect(cli.stderr()).toMatch(new RegExp(`campaign ${id} ended cancelled`));
	expect(JSON.parse(cli.stdout())).toMatchObject({ id, status: { state: 'cancelled' } });
	// The same rule for status --wait.
	const status = await runCli(['campaign', 'status', id, '--wait', '--json'], runner.env);
	expect(status.code).toBe(3);
});

test('a completed campaign followed with --wait still exits 0', async () => {
	const { path } = writeRecipientsCsv(3, { seed: 62 });
	const created = await runCli(
		[
			'campaign',
			'create',
			'--template',
			template(),
			'--from',
			from(),
			'--recipients',
			path,
			'--rate',
			'100',
			'--wait',
			'--json',
		],
		runner.env,
	);
	expect(created.code).toBe(0);
	expect(JSON.parse(created.stdout)).toMatchObject({ status: { state: 'completed', counts: { sent: 3 } } });
});

test('a followed reindex run that fails exits 1 with its reason, from run --wait and from status --wait', async () => {
	const collection = runner.sandbox.fixture.businesses[0].collections[0].id;
	// Port 9 on loopback answers nothing: the run starts, cannot read its feed, and fails.
	const ran = await runCli(
		[
			'reindex',
			'run',
			'--collection',
			collection,
			'--source',
			'http://127.0.0.1:9/feed.ndjson',
			'--id-field',
			'sku',
			'--wait',
			'--json',
		],
		runner.env,
	);
	expect(ran.code).toBe(1);
	const run = JSON.parse(ran.stdout);
	expect(run.state).toBe('failed');
	expect(ran.stderr).toContain(`reindex run ${run.id} ended failed: `);
	const status = await runCli(['reindex', 'status', run.id, '--wait', '--json'], runner.env);
	expect(status.code).toBe(1);
	expect(status.stderr).toContain(`reindex run ${run.id} ended failed`);
});

test('Ctrl-C during --wait stops following, says the campaign goes on and how to follow it, and exits 130', async () => {
	const { path } = writeRecipientsCsv(3, { seed: 63 });
	const cli = startCli([
		'campaign',
		'create',
		'--template',
		template(),
		'--from',
		from(),
		'--recipients',
		path,
		'--at',
		inAnHour(),
		'--wait',
	]);
	// Ctrl-C the moment the id line arrives, as a quick operator would.
	const id = await new Promise<string>((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`no campaign id on stderr in 30 s: ${cli.stderr()}`)), 30_000);
		cli.child.stderr.on('data', () => {
			const seen = idOf(cli.stderr());
			if (seen === undefined || cli.child.signalCode !== null || cli.child.killed) return;
			cli.child.kill('SIGINT');
			clearTimeout(timer);
			resolve(seen);
		});
	});
	expect({ code: await cli.exited, stderr: cli.stderr() }).toMatchObject({ code: 130 });
	expect(cli.stderr()).toContain(
		`stopped following ${id}; it goes on in the runner processes. Follow it again with: convo-runner campaign status ${id} --wait`,
	);
	expect(cli.stderr()).not.toMatch(/\n\s+at /);
	expect((await campaignStatus(runner.context, id)).state).toBe('scheduled');
	await cancel(runner.context, id);
});

test('a semicolon CSV (Excel in many locales) and a tab one are read; --delimiter overrides; no phone column says what was read', async () => {
	const phones = ['4917064000001', '4917064000002', '4917064000003'];
	// As Excel saves "CSV (semicolon delimited)": a BOM, CRLF, a comma inside a cell.
	const semicolon = writeFile(
		'excel.csv',
		`\uFEFFphone;1;2\r\n${phones.map((p, i) => `+${p};Müller, Anna;order ${i}`).join('\r\n')}\r\n`,
	);
	const made = await runCli(
		[
			'campaign',
			'create',
			'--template',
			template(),
			'--from',
			from(),
			'--recipients',
			semicolon,
			'--at',
			inAnHour(),
			'--json',
		],
		runner.env,
	);
	expect(made.code).toBe(0);
	expect(JSON.parse(made.stdout)).toMatchObject({ accepted: 3, rejected: 0 });

	const tab = writeFile('tabs.csv', `phone\t1\t2\n${phones.map((p) => `${p}\tA\tB`).join('\n')}\n`);
	const fromTabs = await runCli(
		[
			'campaign',
			'create',
			'--template',
			template(),
			'--from',
			from(),
			'--recipients',
			tab,
			'--at',
			inAnHour(),
			'--json',
		],
		runner.env,
	);
	expect(JSON.parse(fromTabs.stdout)).toMatchObject({ accepted: 3, rejected: 0 });

	// A delimiter given is used as given: the semicolon file read with commas has one column, and the error shows it.
	const forced = await runCli(
		[
			'campaign',
			'create',
			'--template',
			template(),
			'--from',
			from(),
			'--recipients',
			semicolon,
			'--delimiter',
			'comma',
			'--json',
		],
		runner.env,
	);
	expect(forced.code).toBe(1);
	expect(JSON.parse(forced.stdout).error).toMatch(
		/has no "phone" column or field: .*The header was read as 1 column, with the comma delimiter given: "phone;1;2"$/,
	);
	const named = await runCli(
		[
			'campaign',
			'create',
			'--template',
			template(),
			'--from',
			from(),
			'--recipients',
			semicolon,
			'--delimiter',
			';',
			'--at',
			inAnHour(),
			'--json',
		],
		runner.env,
	);
	expect(JSON.parse(named.stdout)).toMatchObject({ accepted: 3 });

	const noPhone = writeFile('contacts.csv', 'Telefon;Name\n+4917064000009;Anna\n');
	const missing = await runCli(
		['campaign', 'create', '--template', template(), '--from', from(), '--recipients', noPhone, '--json'],
		runner.env,
	);
	expect(missing.code).toBe(1);
	expect(JSON.parse(missing.stdout).error).toMatch(
		/has no "phone" column or field: .*The header was read as 2 columns, with the delimiter told from its header line .*: "Telefon", "Name"$/,
	);

	const wrong = await runCli(
		[
			'campaign',
			'create',
			'--template',
			template(),
			'--from',
			from(),
			'--recipients',
			semicolon,
			'--delimiter',
			'pipe',
			'--json',
		],
		runner.env,
	);
	expect(wrong.code).toBe(1);
	expect(JSON.parse(wrong.stdout).error).toBe(
		'--delimiter must be comma, semicolon or tab (or , ; and a tab character)',
	);
});

test('a .tsv or .txt export (as spreadsheets name tab-separated files) is read with tabs without --format, recipients and suppression imports alike', async () => {
	const phones = ['4917064000021', '4917064000022'];
	// A header with more commas than tabs: told from its header line it would be read with commas.
	const header = 'phone\t1\t2\tnote, kept, aside';
	const rows = phones.map((p, i) => `${p}\tAna\torder ${i}\tcall, then, write`).join('\n');
	const create = (path: string, extra: string[] = []) =>
		runCli(
			[
				'campaign',
				'create',
				'--template',
				template(),
				'--from',
				from(),
				'--recipients',
				path,
				'--at',
				inAnHour(),
				...extra,
				'--json',
			],
			runner.env,
		);
	for (const name of ['export.tsv', 'export.TXT']) {
		const made = await create(writeFile(name, `${header}\n${rows}\n`));
		expect({ name, code: made.code, stderr: made.stderr }).toMatchObject({ name, code: 0 });
		expect(JSON.parse(made.stdout)).toMatchObject({ accepted: 2, rejected: 0 });
		await cancel(runner.context, JSON.parse(made.stdout).id);
	}

	// A delimiter given still wins over the name, and a header without a phone says how it was read.
	const commas = await create(writeFile('commas.tsv', `phone,1,2\n${phones[0]},Ana,order\n`), ['--delimiter', 'comma']);
	expect(JSON.parse(commas.stdout)).toMatchObject({ accepted: 1, rejected: 0 });
	await cancel(runner.context, JSON.parse(commas.stdout).id);
	const noPhone = await create(writeFile('contacts.tsv', 'Telefon\tName, first, last\n4917064000029\tAnna\n'));
	expect(noPhone.code).toBe(1);
	expect(JSON.parse(noPhone.stdout).error).toMatch(
		/The header was read as 2 columns, with the tab delimiter of a \.tsv or \.txt name .*: "Telefon", "Name, first, last"$/,
	);

	const optOuts = writeFile('opt-outs.tsv', `phone\treason\n${phones[0]}\tasked, by phone\n`);
	const imported = await runCli(['suppression', 'import', optOuts, '--json'], runner.env);
	expect(imported.code).toBe(0);
	expect(JSON.parse(imported.stdout)).toMatchObject({ rows: 1, added: 1, rejected: 0 });
	const removed = await runCli(['suppression', 'remove', phones[0], '--json'], runner.env);
	expect(removed.code).toBe(0);
});

test('create lists the rejected rows (line, phone, reason) and how to see them all; a row with the wrong cell count keeps its phone', async () => {
	const bad = Array.from({ length: 12 }, (_, i) => `${10 + i},a,b`);
	const { path, phones } = writeRecipientsCsv(3, { seed: 65, extraLines: [...bad, '+4917065999999,only two'] });
	const created = await runCli(
		['campaign', 'create', '--template', template(), '--from', from(), '--recipients', path, '--at', inAnHour()],
		runner.env,
	);
	expect(created.code).toBe(0);
	const lines = created.stdout.trim().split('\n');
	const id = /^campaign (\w+): scheduled, 3 recipients, 13 rejected$/.exec(lines[0])?.[1];
	expect(id).toBeDefined();
	expect(lines.slice(1, 11)).toEqual(
		bad
			.slice(0, 10)
			.map(
				(row, i) =>
					`  line ${5 + i} (${row.split(',')[0]}): phone has 2 digits; a phone number with country code has 7 to 15`,
			),
	);
	expect(lines[11]).toBe(`  and 3 more; see: convo-runner campaign report ${id} --outcome rejected`);
	expect(lines).toHaveLength(12);

	const report = await runCli(['campaign', 'report', id as string, '--outcome', 'rejected'], runner.env);
	expect(report.code).toBe(0);
	const rows = report.stdout.trim().split('\n').slice(1);
	expect(rows).toHaveLength(13);
	expect(rows.every((row) => row.split(',')[2] === 'rejected')).toBe(true);
	// The cell count broke the row, but its phone cell was readable: the report says whose row it was.
	expect(rows[12]).toMatch(/^17,\+4917065999999,rejected,,line 17: has 2 cells; the header has 3/);
	// One recipient, found by the phone as the file writes it (with its +): its row alone.
	const one = await runCli(['campaign', 'report', id as string, '--phone', `+${phones[1]}`], runner.env);
	expect(one.code).toBe(0);
	expect(one.stdout.trim().split('\n').slice(1)).toEqual([
		expect.stringMatching(new RegExp(`^3,${phones[1]},pending,`)),
	]);
	const stranger = await runCli(['campaign', 'report', id as string, '--phone', '+4917065888888'], runner.env);
	expect(stranger.code).toBe(1);
	expect(stranger.stderr).toContain(`phone 4917065888888 is not a recipient of campaign ${id}`);
	const notAPhone = await runCli(['campaign', 'report', id as string, '--phone', 'abc'], runner.env);
	expect(notAPhone.code).toBe(1);
	expect(notAPhone.stderr).toMatch(/--phone /);
	const unknownOutcome = await runCli(['campaign', 'report', id as string, '--outcome', 'lost'], runner.env);
	expect(unknownOutcome.code).toBe(1);
	expect(unknownOutcome.stderr).toContain('--outcome takes outcomes among pending');
	await cancel(runner.context, id as string);
});

test('campaign report | head: the reader closing early ends the command quietly, with no stack trace', async () => {
	const { path } = writeRecipientsCsv(3000, { seed: 66 });
	const created = await createCampaign(runner.context, {
		templateId: template(),
		from: from(),
		source: path,
		at: inAnHour(),
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	const cli = startCli(['campaign', 'report', created.id]);
	// Like `head -1`: read the first chunk, then close the pipe while the CLI still has rows to write.
	cli.child.stdout.once('data', () => cli.child.stdout.destroy());
	const code = await cli.exited;
	expect(cli.stderr()).toBe('');
	expect(code).toBe(0);
	await cancel(runner.context, created.id);
});

/** Runs the CLI on a pseudo terminal (script(1)), stdout and stderr both on it; its exit code and everything it showed. */
function onTerminal(args: string[], env: NodeJS.ProcessEnv) {
	const command = [process.execPath, ...RUNNER_ARGS, ...args].map((arg) => `'${arg}'`).join(' ');
	const result = spawnSync('script', ['-qec', command, '/dev/null'], {
		env: { ...env, TERM: 'xterm' },
		encoding: 'utf8',
		timeout: 90_000,
	});
	return { code: result.status, output: result.stdout };
}

/** The test runner's env without LOG_LEVEL: what an operator's shell has. */
const withoutLogLevel = () => Object.fromEntries(Object.entries(runner.env).filter(([name]) => name !== 'LOG_LEVEL'));
const JSON_LOG = /\{"level":\d+/;

test('on a terminal a command prints its answer and no JSON log line; --verbose or LOG_LEVEL shows readable ones; --json and pipes keep JSON', async () => {
	const scheduled = (seed: number) => [
		'campaign',
		'create',
		'--template',
		template(),
		'--from',
		from(),
		'--recipients',
		writeRecipientsCsv(3, { seed }).path,
		'--at',
		inAnHour(),
	];
	const ids: string[] = [];
	const idIn = (text: string) => {
		const id = /campaign (\w+): scheduled/.exec(text)?.[1] ?? (JSON.parse(text) as { id: string }).id;
		ids.push(id);
		return id;
	};

	const quiet = onTerminal(scheduled(70), withoutLogLevel());
	expect(quiet.code).toBe(0);
	expect(quiet.output).toMatch(/campaign \w+: scheduled, 3 recipients, 0 rejected/);
	expect(quiet.output).not.toMatch(JSON_LOG);
	expect(quiet.output).not.toContain('campaign created');
	idIn(quiet.output);

	const verbose = onTerminal([...scheduled(71), '--verbose'], withoutLogLevel());
	expect(verbose.code).toBe(0);
	const id = idIn(verbose.output);
	expect(verbose.output).toContain(
		`convo-runner: campaign created (campaign=${id}, state=scheduled, recipients=3, rejected=0)`,
	);
	expect(verbose.output).not.toMatch(JSON_LOG);

	const asked = onTerminal(scheduled(72), { ...withoutLogLevel(), LOG_LEVEL: 'info' });
	expect(asked.output).toContain('convo-runner: campaign created (');
	expect(asked.output).not.toMatch(JSON_LOG);
	idIn(asked.output);

	// --json on a terminal, and any pipe, keep pino's JSON lines on stderr for machines.
	const json = onTerminal([...scheduled(73), '--json'], withoutLogLevel());
	expect(json.output).toMatch(/\{"level":30,.*"msg":"campaign created"\}/);
	const piped = await runCli(scheduled(74), withoutLogLevel());
	expect(piped.code).toBe(0);
	expect(piped.stderr).toMatch(/\{"level":30,.*"msg":"campaign created"\}/);
	idIn(piped.stdout);
	for (const created of ids) await cancel(runner.context, created);
	for (const line of json.output.split('\n').filter((text) => text.includes('"msg":"campaign created"'))) {
		await cancel(runner.context, (JSON.parse(line.trim()) as { campaign: string }).campaign);
	}
});

/** Whether process `pid` is `ancestor` or runs under it (Linux: each process's parent in /proc). */
function descendsFrom(pid: number, ancestor: number): boolean {
	for (let at = pid; at > 1; ) {
		if (at === ancestor) return true;
		let stat: string;
		try {
			stat = readFileSync(`/proc/${at}/stat`, 'utf8');
		} catch {
			// Gone: a heartbeat a killed process left behind.
			return false;
		}
		// Fields after the command name (in parentheses, which may hold anything): state, then the parent's pid.
		at = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
	}
	return false;
}

test('a runner process on a terminal logs readable lines: a warning is one plain line, not JSON', async () => {
	const command = [process.execPath, ...RUNNER_ARGS, 'worker'].map((arg) => `'${arg}'`).join(' ');
	const env = { ...withoutLogLevel(), TERM: 'xterm', RUNNER_WEBHOOK_KEY: undefined, RUNNER_TOKEN: undefined };
	const terminal = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
	let output = '';
	terminal.stdout.on('data', (chunk) => (output += String(chunk)));
	const exited = new Promise<number | null>((resolve) => terminal.once('exit', resolve));
	// Its heartbeat gives its pid, to stop it as an operator's Ctrl-C would: this terminal's worker,
	// not the file's own, which may still be starting (its heartbeat then comes after this test began).
	const started = await waitFor(
		'the worker on the terminal',
		async () => (await liveRunners(runner.context)).find((r) => descendsFrom(r.pid, terminal.pid as number)),
		60_000,
	);
	// The heartbeat is written while the process starts, before 'runner started': the signal must
	// stop it cleanly whenever it comes (script -e exits with the worker's code).
	process.kill(started.pid, 'SIGINT');
	expect(await exited).toBe(0);
	expect(output).toContain('convo-runner: warning: this process delivers no webhook events: set RUNNER_WEBHOOK_KEY');
	expect(output).toMatch(/convo-runner: runner started \(concurrency=10, prefix=/);
	expect(output).toContain('convo-runner: runner stopped (clean=true)');
	expect(output).not.toMatch(JSON_LOG);
});
