/**
 * Benchmark 2: the same sends the way an n8n user would make them without the runner: a workflow
 * whose Convo node sends the template item by item (n8n-core, in a child process so its peak RSS
 * is its own), once one at a time and once with Batching > Requests at Once, against the sandbox at
 * the same 50 ms latency as benchmark 1's limited scenario. Ratios runner / workflow use benchmark
 * 1's figures of the same `npm run bench`.
 *
 * One at a time, 10,000 sends at 50 ms take over 500 s, a third of the whole budget: that run sends
 * 500 and its rate is what it is measured at; the 10,000-send time beside it is that rate's
 * extrapolation, and says so.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { positionalTemplate, startSandboxProcess, templateSends, writeRecipientsCsv } from '../test/runner/support';
import type { CampaignScenarioResult } from './campaigns.bench';
import { rateFigures, readResult, ROOT, round, size, type BenchResult, type Figure } from './lib/common';
import { SEND_ENDPOINT, setFault } from './lib/stack';

const CHILD = join(ROOT, 'bench', 'lib', 'workflowChild.ts');
const LATENCY_MS = 50;
const REQUESTS_AT_ONCE = 10;

interface ChildReport {
	items: number;
	withMessageId: number;
	error?: string;
	seconds: number;
	maxRssMb: number;
}

function runChild(settings: Record<string, unknown>): Promise<ChildReport> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
			env: { PATH: process.env.PATH, HOME: process.env.HOME, BENCH_WORKFLOW: JSON.stringify(settings) },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		child.once('exit', (code) => {
			const line = stdout.trim().split('\n').pop() ?? '';
			if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as ChildReport);
			else reject(new Error(`the workflow child exited with ${code}: ${stderr.slice(-500)}`));
		});
	});
}

interface WorkflowRun {
	mode: string;
	requestsAtOnce: number;
	items: number;
	sends: number;
	withMessageId: number;
	seconds: number;
	steadyRate: number;
	maxSliding: number;
	peakRssMb: number;
}

export async function benchWorkflow(
	_redisUrl: string,
	earlier: Map<string, BenchResult> = new Map(),
): Promise<BenchResult> {
	const started = Date.now();
	const full = size(10_000, 1_000);
	const modes = [
		{ mode: 'one at a time', requestsAtOnce: 1, items: size(500, 100) },
		{ mode: `Requests at Once ${REQUESTS_AT_ONCE}`, requestsAtOnce: REQUESTS_AT_ONCE, items: full },
	];
	const runs: WorkflowRun[] = [];
	for (const [index, mode] of modes.entries()) {
		const sandbox = await startSandboxProcess();
		try {
			await setFault(sandbox, { endpoint: SEND_ENDPOINT, latencyMs: LATENCY_MS });
			const business = sandbox.fixture.businesses[0];
			const { path } = writeRecipientsCsv(mode.items, { seed: 20 + index });
			const report = await runChild({
				baseUrl: sandbox.baseUrl,
				externalUrl: sandbox.externalUrl,
				apiKey: business.apiKey,
				accessToken: business.accessToken,
				templateId: positionalTemplate(business).id,
				from: business.phoneNumbers[0],
				recipientsCsv: path,
				requestsAtOnce: mode.requestsAtOnce,
			});
			if (report.error) throw new Error(`the workflow failed: ${report.error}`);
			const sends = await templateSends(sandbox);
			const rates = rateFigures(sends.map((message) => Date.parse(message.createdAt)));
			runs.push({
				...mode,
				sends: sends.length,
				withMessageId: report.withMessageId,
				seconds: round(report.seconds, 1),
				steadyRate: round(rates.steadyRate, 1),
				maxSliding: rates.maxSliding,
				peakRssMb: round(report.maxRssMb),
			});
		} finally {
			await sandbox.close();
		}
	}

	const campaigns = earlier.get('campaigns') ?? readResult('campaigns');
	const limited = (campaigns?.details?.runs as CampaignScenarioResult[] | undefined)?.find(
		(run) => run.name === 'limited',
	);
	const figures: Figure[] = [];
	for (const run of runs) {
		const timeFor10k = full / run.steadyRate;
		figures.push(
			{
				figure: `workflow, ${run.mode}: sends in the sandbox log / items`,
				value: `${run.sends} / ${run.items}`,
				target: 'equal',
				met: run.sends === run.items && run.withMessageId === run.items,
			},
			{ figure: `workflow, ${run.mode}: sustained rate`, value: run.steadyRate, unit: '/s' },
			{ figure: `workflow, ${run.mode}: most sends in any sliding second (no limit applies)`, value: run.maxSliding },
			{
				figure: `workflow, ${run.mode}: time for ${full.toLocaleString('en-US')} sends${run.items < full ? ` (extrapolated from ${run.items.toLocaleString('en-US')})` : ''}`,
				value: round(run.items < full ? timeFor10k : run.seconds, 1),
				unit: 's',
			},
			{ figure: `workflow, ${run.mode}: peak RSS`, value: run.peakRssMb, unit: 'MB' },
		);
		if (limited) {
			figures.push(
				{
					figure: `runner / workflow ${run.mode}: sustained rate`,
					value: round(limited.steadyRate / run.steadyRate, 2),
				},
				{
					figure: `runner / workflow ${run.mode}: peak RSS`,
					value: round(Math.max(...limited.peakRssMb) / run.peakRssMb, 2),
				},
			);
		}
	}
	if (limited)
		figures.push({
			figure: 'runner (benchmark 1, limited: 100/s, 50 ms): sustained rate, peak RSS',
			value: `${limited.steadyRate}/s, ${Math.max(...limited.peakRssMb)} MB`,
		});
	return {
		name: 'workflow',
		title: 'Benchmark 2: the same sends from an n8n workflow, item by item',
		quick: full !== 10_000,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures,
		notes: [
			`Template → Send through n8n-core (WorkflowExecute), sandbox latency ${LATENCY_MS} ms on B8; the runner figures are benchmark 1's limited scenario ${earlier.has('campaigns') ? 'of this same run' : campaigns ? `of an earlier run (${campaigns.startedAt})` : '(missing: run benchmark 1 first)'}.`,
			`One at a time sends ${modes[0].items.toLocaleString('en-US')} items (10,000 would take 500+ s of the 15-minute budget); its 10,000-send time is extrapolated from its measured rate.`,
			"The runner holds 100/s (the limit); the workflow has no limit, so with Requests at Once its rate is the latency's and can pass the channel's.",
		],
		details: { runs, runner: limited },
	};
}
