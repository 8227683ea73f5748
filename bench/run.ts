/**
 * `npm run bench`: the five benchmarks of issue #12, the start-up one of issue #19, and the Redis
 * Cluster and ten-number ones of issue #20 and the delivery tracking one of issue #22 and the suppression list one of #23, the daily limit one of #36, the channel's ceiling of #38, one after another on one Redis (REDIS_URL when set, else a private
 * redis-server on a free port; the cluster benchmark starts a cluster of its own), each printing
 * its table and writing bench/results/<name>.json; then docs/benchmarks.md's generated part is
 * rewritten from them.
 *
 *   npm run bench                        all ten, full sizes (about 30 minutes on 2 cores)
 *   npm run bench -- --quick             small sizes, to check the benchmarks themselves
 *   npm run bench -- --only reindex,sandbox
 *   npm run bench -- --only million      the 1,000,000-recipient campaign at 1,000/s (about 17 minutes; never in the default run)
 *
 * Not a test: nothing here fails a build. The exit code is 1 only when a benchmark could not run.
 */
import { Redis } from 'ioredis';

import { startPrivateRedis } from '../runner/src/devRedis';
import { benchCampaigns } from './campaigns.bench';
import { benchBudget } from './budget.bench';
import { benchCap } from './cap.bench';
import { benchCeiling, benchMillion } from './ceiling.bench';
import { benchCluster } from './cluster.bench';
import { describeMachine, NAMED_ONLY, printTable, QUICK, writeResult, type BenchResult } from './lib/common';
import { writeDocs } from './lib/docs';
import { benchMemory } from './memory.bench';
import { benchNumbers } from './numbers.bench';
import { benchReindex } from './reindex.bench';
import { benchSandbox } from './sandbox.bench';
import { benchStartup } from './startup.bench';
import { benchSuppression } from './suppression.bench';
import { benchTracking } from './tracking.bench';
import { benchWindows } from './windows.bench';
import { benchWorkflow } from './workflow.bench';

/** In the order they run: 2 reads 1's figures, 5 states its headroom over 1 to 4; 6 and 7 stand alone. */
const BENCHMARKS: Record<string, (redisUrl: string, earlier: Map<string, BenchResult>) => Promise<BenchResult>> = {
	campaigns: benchCampaigns,
	workflow: benchWorkflow,
	memory: benchMemory,
	reindex: benchReindex,
	sandbox: benchSandbox,
	startup: benchStartup,
	cluster: benchCluster,
	numbers: benchNumbers,
	tracking: benchTracking,
	windows: benchWindows,
	suppression: benchSuppression,
	cap: benchCap,
	budget: benchBudget,
	ceiling: benchCeiling,
	million: benchMillion,
};

function chosen(): string[] {
	const index = process.argv.indexOf('--only');
	if (index === -1) return Object.keys(BENCHMARKS).filter((name) => !NAMED_ONLY.has(name));
	const names = (process.argv[index + 1] ?? '').split(',').filter(Boolean);
	const unknown = names.filter((name) => !(name in BENCHMARKS));
	if (names.length === 0 || unknown.length > 0)
		throw new Error(`--only takes a comma-separated list of: ${Object.keys(BENCHMARKS).join(', ')}`);
	return names;
}

async function main(): Promise<void> {
	const names = chosen();
	const privateRedis = process.env.REDIS_URL ? undefined : await startPrivateRedis();
	const redisUrl = process.env.REDIS_URL ?? (privateRedis?.url as string);
	const probe = new Redis(redisUrl);
	const machine = describeMachine(/redis_version:(\S+)/.exec(await probe.info('server'))?.[1] ?? 'unknown');
	probe.disconnect();
	console.log(
		`bench: ${names.join(', ')}${QUICK ? ' (--quick)' : ''}; ${machine.cores} cores (${machine.cpu}), ${machine.memoryGb} GB, load ${machine.loadAverageAtStart.join(' ')}; ` +
			`Redis ${machine.redis} ${privateRedis ? '(private, on a free port)' : '(REDIS_URL)'}`,
	);
	const started = Date.now();
	const results = new Map<string, BenchResult>();
	const failed: string[] = [];
	try {
		for (const name of names) {
			// One that cannot run is reported and the others still run: a 15-minute run is not thrown away.
			try {
				const result = await BENCHMARKS[name](redisUrl, results);
				results.set(name, result);
				printTable(result);
				writeResult(result, machine);
			} catch (error) {
				failed.push(name);
				console.error(`\nbench: ${name} could not run:`, error);
			}
		}
	} finally {
		await privateRedis?.stop();
	}
	const minutes = (Date.now() - started) / 60_000;
	console.log(`\nbench: done in ${minutes.toFixed(1)} minutes`);
	if (!QUICK)
		writeDocs(minutes, names.length === Object.keys(BENCHMARKS).length - NAMED_ONLY.size && failed.length === 0);
	if (failed.length > 0) {
		console.error(`bench: ${failed.join(', ')} could not run`);
		process.exitCode = 1;
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
