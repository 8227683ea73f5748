/**
 * A runner under benchmark: the sandbox in a process of its own, runner worker processes spawned
 * as the tests spawn them (test/runner/support.ts), one key prefix per stack on the shared Redis,
 * and the campaign's sends read from the sandbox's own log.
 */
import { fork, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { campaignStatus, createCampaign } from '../../runner/src/core/campaigns';
import {
	positionalTemplate,
	layOutInstalledRunner,
	spawnRunner,
	setFault,
	startRunnerUnderTest,
	templateSends,
	waitFor,
	writeRecipientsCsv,
	type RunnerUnderTest,
	type SandboxMessage,
	type SpawnedRunner,
} from '../../test/runner/support';
import { peakRssMb, ROOT } from './common';

export const SEND_ENDPOINT = 'POST /api/external/v2/send-template';

export interface StackOptions {
	concurrency: number;
	/** Latency the sandbox adds to every B8 send, ms. */
	latencyMs: number;
	processes: number;
}

export async function startStack(redisUrl: string, options: StackOptions): Promise<RunnerUnderTest> {
	const stack = await startRunnerUnderTest(redisUrl, {
		RUNNER_CONCURRENCY: String(options.concurrency),
		LOG_LEVEL: 'warn',
	});
	if (options.latencyMs > 0) await setFault(stack.sandbox, { endpoint: SEND_ENDPOINT, latencyMs: options.latencyMs });
	for (let i = 0; i < options.processes; i++) stack.spawnWorker();
	return stack;
}

/** Creates a campaign of `recipients` rows in this process (the core library, as the tests do) and waits for it to complete. */
export async function runCampaign(
	stack: RunnerUnderTest,
	recipients: number,
	rate: number,
	seed: number,
): Promise<{ id: string; phones: string[] }> {
	const { path, phones } = writeRecipientsCsv(recipients, { seed });
	const from = stack.business.phoneNumbers[0];
	const created = await createCampaign(stack.context, {
		templateId: positionalTemplate(stack.business).id,
		from,
		source: path,
		rate,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	await waitForCompletion(stack, created.id, recipients, rate);
	return { id: created.id, phones };
}

export async function waitForCompletion(
	stack: RunnerUnderTest,
	id: string,
	recipients: number,
	rate: number,
): Promise<void> {
	// Generous: three times the ideal duration plus a minute, for a loaded 2-core machine.
	const timeoutMs = ((3 * recipients) / rate) * 1000 + 60_000;
	const state = await waitFor(
		`campaign ${id} to end`,
		async () => {
			const status = await campaignStatus(stack.context, id);
			return ['completed', 'failed', 'cancelled', 'paused'].includes(status.state) ? status.state : undefined;
		},
		timeoutMs,
		500,
	);
	if (state !== 'completed') throw new Error(`campaign ${id} ended ${state}`);
}

/** Accepted sends from the stack's sending number, as the sandbox logged them. */
export async function sendsFrom(stack: RunnerUnderTest): Promise<SandboxMessage[]> {
	const from = stack.business.phoneNumbers[0];
	return (await templateSends(stack.sandbox)).filter((message) => message.from === from);
}

/** The sandbox's log read a page at a time: a million sends do not fit one answer. */
const LOG_PAGE = 50_000;

/** Each accepted send from the stack's sending number: its phone and its arrival (ms), read page by page. */
export async function arrivalsFrom(stack: RunnerUnderTest): Promise<Array<{ to: string; at: number }>> {
	const from = stack.business.phoneNumbers[0];
	const arrivals: Array<{ to: string; at: number }> = [];
	for (let offset = 0; ; offset += LOG_PAGE) {
		const response = await fetch(
			`${stack.sandbox.baseUrl}/__sandbox/messages?from=${from}&offset=${offset}&limit=${LOG_PAGE}`,
		);
		if (!response.ok) throw new Error(`GET /__sandbox/messages: ${response.status} ${await response.text()}`);
		const page = (await response.json()) as SandboxMessage[];
		for (const message of page)
			if (message.source === 'template')
				arrivals.push({ to: message.to, at: Date.parse(message.request?.receivedAt ?? message.createdAt) });
		if (page.length < LOG_PAGE) return arrivals;
	}
}

/** A tap in front of the stack's sandbox (tap.mjs): the runner's external URL through it, and the times it saw sends arrive. */
export interface Tap {
	/** CONVO_EXTERNAL_URL for a worker whose sends go through the tap. */
	externalUrl: string;
	/** Each send request's arrival at the tap (ms, in arrival order). */
	arrivals(): Promise<number[]>;
	close(): void;
}

export async function startTap(stack: RunnerUnderTest): Promise<Tap> {
	const sandbox = new URL(stack.sandbox.baseUrl);
	const folder = mkdtempSync(join(tmpdir(), 'convo-tap-'));
	const file = join(folder, 'arrivals.f64');
	const child = fork(join(__dirname, 'tap.mjs'), [sandbox.port, file], { stdio: 'ignore' });
	const [{ port }] = (await once(child, 'message')) as [{ port: number }];
	const external = new URL(String(stack.env.CONVO_EXTERNAL_URL));
	external.port = String(port);
	return {
		externalUrl: external.toString().replace(/\/$/, ''),
		async arrivals() {
			child.send('dump');
			await once(child, 'message');
			// Copied out of the read's buffer, which may start where a float64 cannot.
			return [...new Float64Array(new Uint8Array(readFileSync(file)).buffer)];
		},
		close() {
			child.kill('SIGKILL');
			rmSync(folder, { recursive: true, force: true });
		},
	};
}

export const workerPeaksMb = (stack: RunnerUnderTest) => stack.processes.map((runner) => peakRssMb(runner.child.pid));

export {
	positionalTemplate,
	setFault,
	templateSends,
	waitFor,
	writeRecipientsCsv,
	type RunnerUnderTest,
	type SandboxMessage,
};

/** Builds the runner's bundle (runner/scripts/build.mjs), so figures of the built runner are of the current sources. */
export function buildRunnerBundle(): void {
	const built = spawnSync(process.execPath, [join(ROOT, 'runner', 'scripts', 'build.mjs')], { encoding: 'utf8' });
	if (built.status !== 0) throw new Error(`runner/scripts/build.mjs failed: ${built.stdout}${built.stderr}`);
}

/**
 * A worker started as the installed package starts it: its bin run as a program (so its shebang's
 * node flags apply, no wrapper process) beside the built bundle, as `npm install convo-runner` lays
 * them out (bin/ and dist/; the bin runs dist/ when no sources sit beside it). The bundle is built first.
 */
export function spawnShippedWorker(stack: RunnerUnderTest, extra: NodeJS.ProcessEnv = {}): SpawnedRunner {
	const runner = spawnRunner(['worker'], { ...stack.env, ...extra }, [shippedBin()]);
	stack.processes.push(runner);
	return runner;
}

let shipped: string | undefined;

/** The bin of the package as installed (above), built once per benchmark process; its folder goes when the process exits. */
export function shippedBin(): string {
	if (shipped) return shipped;
	buildRunnerBundle();
	const dir = mkdtempSync(join(tmpdir(), 'convo-runner-package-'));
	const bin = layOutInstalledRunner(dir, join(ROOT, 'runner', 'dist'));
	process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
	shipped = bin;
	return bin;
}
