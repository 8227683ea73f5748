/**
 * The quick start's main job, `npm start`: with nothing configured it starts a private Redis, the
 * sandbox and a runner process, creates a demo campaign of 1,000 recipients from
 * examples/campaign-recipients.csv (with a few bad rows), follows it with the progress bar, then
 * prints the report's summary and writes the full report. Set REDIS_URL to use your own Redis.
 *
 * The sandbox fails 3% of sends with 500 and adds latency, so retries show; nothing leaves this machine.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import { startPrivateRedis } from '../runner/src/devRedis';

const root = join(__dirname, '..');
const bin = join(root, 'runner', 'bin', 'convo-runner.mjs');

function run(
	args: string[],
	env: NodeJS.ProcessEnv,
	stdout: 'inherit' | 'pipe' = 'inherit',
): Promise<{ code: number | null; out: string }> {
	return new Promise((resolve) => {
		const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', stdout, 'inherit'] });
		let out = '';
		child.stdout?.on('data', (chunk) => (out += String(chunk)));
		child.once('exit', (code) => resolve({ code, out }));
	});
}

async function main(): Promise<void> {
	// With an append-only file, as the runner wants (it warns about appendonly no); the folder goes with it.
	const privateRedis = process.env.REDIS_URL ? undefined : await startPrivateRedis(['--appendonly', 'yes']);
	const redisUrl = process.env.REDIS_URL ?? (privateRedis?.url as string);
	const sandbox = await startSandbox({ port: Number(process.env.SANDBOX_PORT ?? 0) });
	const business = sandbox.fixture.businesses[0];
	const template = business.templates.find((t) => t.name === 'order_update') ?? business.templates[0];
	await fetch(`${sandbox.baseUrl}/__sandbox/faults`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({
			endpoint: 'POST /api/external/v2/send-template',
			latencyMs: 40,
			errorRate: 0.03,
			errorStatus: 500,
		}),
	});
	const env: NodeJS.ProcessEnv = {
		...process.env,
		REDIS_URL: redisUrl,
		RUNNER_PREFIX: process.env.RUNNER_PREFIX ?? `demo${Date.now().toString(36)}`,
		CONVO_EXTERNAL_URL: sandbox.externalUrl,
		CONVO_API_KEY: business.apiKey,
		LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
		// A local demo: its feeds and receivers may be on this machine (docs/operating/security.md).
		RUNNER_ALLOW_PRIVATE_URLS: process.env.RUNNER_ALLOW_PRIVATE_URLS ?? 'true',
	};
	console.log(
		`Redis ${privateRedis ? `(private) ${redisUrl}` : redisUrl}; sandbox ${sandbox.baseUrl}; ` +
			`business "${business.name}", template "${template.name}"`,
	);

	const runner = spawn(process.execPath, [bin, 'start'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
	let exitCode = 0;
	try {
		const source = join(root, 'examples', 'campaign-recipients.csv');
		console.log(
			`\n$ convo-runner campaign create --template ${template.id} --from ${business.phoneNumbers[0]} ` +
				'--recipients examples/campaign-recipients.csv --rate 100 --wait',
		);
		const created = await run(
			[
				'campaign',
				'create',
				'--template',
				template.id,
				'--from',
				business.phoneNumbers[0],
				'--recipients',
				source,
				'--rate',
				'100',
				'--wait',
				'--json',
			],
			env,
			'pipe',
		);
		if (created.code !== 0) throw new Error(`campaign create failed: ${created.out}`);
		const answer = JSON.parse(created.out) as {
			id: string;
			rejections: Array<{ line: number; reason: string }>;
			status: { state: string; counts: Record<string, number> };
		};
		const { counts, state } = answer.status;
		console.log(`\ncampaign ${answer.id}: ${state}`);
		for (const [outcome, count] of Object.entries(counts))
			if (count > 0) console.log(`  ${outcome.padEnd(10)} ${count}`);
		console.log('rejected rows (never sent):');
		for (const row of answer.rejections) console.log(`  line ${row.line}: ${row.reason}`);

		const messages = (await (await fetch(`${sandbox.baseUrl}/__sandbox/messages`)).json()) as Array<{
			source: string;
			to: string;
		}>;
		const sends = messages.filter((message) => message.source === 'template');
		console.log(
			`the sandbox received ${sends.length} template sends to ${new Set(sends.map((m) => m.to)).size} recipients`,
		);

		mkdirSync(join(root, '.tmp'), { recursive: true });
		const reportPath = join(root, '.tmp', `campaign-${answer.id}-report.csv`);
		await run(['campaign', 'report', answer.id, '--format', 'csv', '--output', reportPath], env);
		console.log(`full report (one row per recipient): ${reportPath}`);
		if (state !== 'completed' || sends.length !== counts.sent) exitCode = 1;
	} catch (error) {
		console.error((error as Error).message);
		exitCode = 1;
	} finally {
		// A runner that already exited (a refused environment) sends no second 'exit': waiting would hang.
		if (runner.exitCode === null && runner.signalCode === null) {
			const stopped = new Promise((resolve) => runner.once('exit', resolve));
			runner.kill('SIGTERM');
			await stopped;
		}
		await sandbox.close();
		await privateRedis?.stop();
	}
	process.exit(exitCode);
}

void main();
