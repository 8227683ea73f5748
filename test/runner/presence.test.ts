// @serial: SIGKILLs runner processes, and measures how soon the CLI warns
/**
 * Runner processes make themselves known (issue 21, item 1): each `start` and `worker` keeps a
 * heartbeat key under the prefix. A CLI following a campaign says within seconds that no runner
 * process is alive on its Redis and prefix, and keeps waiting; with one alive it says nothing; a
 * SIGKILLed process drops out after its TTL; /readyz counts the processes. Real processes, real Redis.
 */
import { spawn } from 'node:child_process';

import { cancel } from '../../runner/src/core/campaigns';
import { liveRunners } from '../../runner/src/core/runners';
import {
	expectNoSecret,
	positionalTemplate,
	RUNNER_ARGS,
	runCli,
	startApi,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(120_000);

/** Every process's beat, shortened from its 5 s default through its setting; a key lapses three beats after the last. */
const HEARTBEAT_MS = 2000;
const HEARTBEAT_TTL_MS = HEARTBEAT_MS * 3;
const runner = useRunnerUnderTest({ RUNNER_HEARTBEAT: `${HEARTBEAT_MS}ms` });
const NO_RUNNER =
	/no runner is taking this campaign: no convo-runner process is alive on Redis at 127\.0\.0\.1:\d+ with prefix (\S+); start one with/;
/** The bound the warning must keep, counted on the CLI's own clock (from its first line), not from spawn: tsx loading takes long on a loaded machine. */
const WARNING_WITHIN_MS = 5000;

/** `campaign create --wait` for a campaign due in an hour: it stays scheduled, so the CLI keeps following. */
function followScheduled(seed: number) {
	const { path } = writeRecipientsCsv(3, { seed });
	const at = new Date(Date.now() + 3_600_000).toISOString();
	return following([
		'campaign',
		'create',
		'--template',
		positionalTemplate(runner.business).id,
		'--from',
		`+${runner.business.phoneNumbers[0]}`,
		'--recipients',
		path,
		'--at',
		at,
		'--wait',
	]);
}

/** The CLI started in the background; each line of its stderr stamped on arrival. */
function following(args: string[]) {
	const child = spawn(process.execPath, [...RUNNER_ARGS, ...args], {
		env: runner.env,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const lines: Array<{ at: number; text: string }> = [];
	let partial = '';
	child.stderr.on('data', (chunk) => {
		const parts = (partial + String(chunk)).split('\n');
		partial = parts.pop() ?? '';
		for (const text of parts) lines.push({ at: Date.now(), text });
	});
	const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
	const line = (pattern: RegExp) => lines.find((entry) => pattern.test(entry.text));
	return { child, exited, lines, line };
}

test('with no runner process alive, a plain create and list say so once on stderr, naming the prefix and how to start a runner; stdout keeps the answer', async () => {
	expect(await liveRunners(runner.context)).toEqual([]);
	const { path } = writeRecipientsCsv(3, { seed: 72 });
	const at = new Date(Date.now() + 3_600_000).toISOString();
	const created = await runCli(
		[
			'campaign',
			'create',
			'--template',
			positionalTemplate(runner.business).id,
			'--from',
			`+${runner.business.phoneNumbers[0]}`,
			'--recipients',
			path,
			'--at',
			at,
			'--json',
		],
		runner.env,
	);
	expect(created.code).toBe(0);
	const id = JSON.parse(created.stdout).id as string;
	const listed = await runCli(['campaign', 'list'], runner.env);
	expect(listed.code).toBe(0);
	expect(listed.stdout).toContain(id);
	const prefix = runner.env.RUNNER_PREFIX as string;
	for (const [stderr, about] of [
		[created.stderr, `no runner is taking campaign ${id} yet`],
		[listed.stderr, 'nothing listed here is being sent'],
	]) {
		const warnings = stderr.split('\n').filter((line) => line.includes('no convo-runner process is alive'));
		expect(warnings).toHaveLength(1);
		expect(warnings[0]).toMatch(
			new RegExp(
				`^convo-runner: ${about}: no convo-runner process is alive on Redis at 127\\.0\\.0\\.1:\\d+ with prefix ${prefix}; start one with \`convo-runner start\``,
			),
		);
		expect(warnings[0]).toContain(`RUNNER_PREFIX=${prefix}`);
	}
	await cancel(runner.context, id);
});

test('with no runner process alive, create --wait (and status --wait) say so within seconds of the CLI starting, keep waiting, and say when one is alive', async () => {
	expect(await liveRunners(runner.context)).toEqual([]);
	const cli = followScheduled(70);
	const created = await waitFor(
		'the CLI to print the campaign',
		async () => cli.line(/^campaign \w+: 3 recipients/),
		60_000,
		50,
	);
	const warning = await waitFor('the no-runner warning', async () => cli.line(NO_RUNNER), 60_000, 50);
	expect(warning.at - created.at).toBeLessThan(WARNING_WITHIN_MS);
	expect(NO_RUNNER.exec(warning.text)?.[1]).toBe(runner.env.RUNNER_PREFIX);
	expect(warning.text).toContain(`RUNNER_PREFIX=${runner.env.RUNNER_PREFIX}`);
	const id = /^campaign (\w+):/.exec(created.text)?.[1] as string;
	// status --wait follows the same way and says the same.
	const status = following(['campaign', 'status', id, '--wait']);
	await waitFor('the no-runner warning of status --wait', async () => status.line(NO_RUNNER), 60_000, 50);
	status.child.kill('SIGINT');
	expect(await status.exited).toBe(130);
	// It keeps waiting: a runner that starts now is seen, and the follow goes on.
	expect(cli.child.exitCode).toBeNull();
	runner.spawnWorker();
	await waitFor(
		'the CLI to see the runner',
		async () => cli.line(/1 runner process is alive now; following on/),
		30_000,
		100,
	);
	expect(cli.lines.filter((entry) => NO_RUNNER.test(entry.text))).toHaveLength(1);
	cli.child.kill('SIGINT');
	expect(await cli.exited).toBe(130);
	await cancel(runner.context, id);
});

test('with a runner process alive, create --wait, a plain create and list say nothing of the kind', async () => {
	await waitFor('a live runner', async () => (await liveRunners(runner.context)).length > 0, 30_000);
	// Nor do a plain create and list.
	const plain = await runCli(
		[
			'campaign',
			'create',
			'--template',
			positionalTemplate(runner.business).id,
			'--from',
			`+${runner.business.phoneNumbers[0]}`,
			'--recipients',
			writeRecipientsCsv(3, { seed: 73 }).path,
			'--at',
			new Date(Date.now() + 3_600_000).toISOString(),
			'--json',
		],
		runner.env,
	);
	const listed = await runCli(['campaign', 'list'], runner.env);
	expect([plain.code, listed.code]).toEqual([0, 0]);
	expect(plain.stderr + listed.stderr).not.toContain('no convo-runner process is alive');
	await cancel(runner.context, JSON.parse(plain.stdout).id);
	const cli = followScheduled(71);
	const created = await waitFor(
		'the CLI to print the campaign',
		async () => cli.line(/^campaign \w+: 3 recipients/),
		60_000,
		50,
	);
	// Past the bound the warning would have kept, and past a second check.
	await new Promise((resolve) => setTimeout(resolve, WARNING_WITHIN_MS + 1000));
	expect(cli.child.exitCode).toBeNull();
	cli.child.kill('SIGINT');
	expect(await cli.exited).toBe(130);
	expect(cli.lines.map((entry) => entry.text).join('\n')).not.toMatch(/no runner is taking/);
	await cancel(runner.context, /^campaign (\w+):/.exec(created.text)?.[1] as string);
});

test('each process is listed with its facts and no secret; a SIGKILLed one drops out after its TTL, a stopped one at once; /readyz counts them', async () => {
	const killed = runner.spawnWorker();
	const pid = killed.child.pid as number;
	const listed = await waitFor(
		'the new worker to beat',
		async () => (await liveRunners(runner.context)).find((r) => r.pid === pid),
		60_000,
	);
	expect(listed).toMatchObject({
		role: 'worker',
		pid,
		version: expect.stringMatching(/^\d+\.\d+\.\d+/),
		started_at: expect.any(String),
	});
	expect(listed.queues.length).toBeGreaterThan(0);
	expectNoSecret(runner.business, { heartbeat: JSON.stringify(listed) });
	expect(JSON.stringify(listed)).not.toContain('redis://');

	const base = await startApi(runner, { RUNNER_TOKEN: 'presence-token-0123456789' });
	const readyz = (await (await fetch(`${base}/readyz`)).json()) as { status: string; runners: number };
	expect(readyz).toEqual({ status: 'ok', runners: 3 });

	await killed.kill('SIGKILL');
	const killedAt = Date.now();
	// Nothing said goodbye: it is still listed until its key lapses...
	expect((await liveRunners(runner.context)).some((r) => r.pid === pid)).toBe(true);
	await waitFor(
		'the killed worker to drop out',
		async () => !(await liveRunners(runner.context)).some((r) => r.pid === pid),
		HEARTBEAT_TTL_MS + 10_000,
		250,
	);
	// ...which is a TTL after its last beat: at least TTL less one beat after the kill.
	expect(Date.now() - killedAt).toBeGreaterThanOrEqual(HEARTBEAT_TTL_MS - HEARTBEAT_MS - 500);

	// A process stopped by SIGTERM removes its key on the way out.
	const stopped = runner.processes[0];
	const stoppedPid = stopped.child.pid;
	expect(await stopped.kill('SIGTERM')).toBe(0);
	expect((await liveRunners(runner.context)).some((r) => r.pid === stoppedPid)).toBe(false);
	expect(((await (await fetch(`${base}/readyz`)).json()) as { runners: number }).runners).toBe(1);
});
