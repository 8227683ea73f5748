/** `start` and `worker`: the commands that run a runner process until SIGTERM or SIGINT. */
import type { Command } from 'commander';

import { ConfigError, loadConfig, type RunnerConfig } from '../config';
import type { RunnerContext } from '../context';
import { loggerFor } from '../log';
import {
	checkRedis,
	closeContext,
	openContext,
	requireService,
	runProcess,
	startPrivateRedis,
	warnOfOldLayout,
	type RunningRunner,
} from '../runtime';
import type { RunningHttp } from '../http/server';
import { fail } from './command';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Whether `start` serves the control API and console: only with a token, which is required off loopback. */
function wantsHttp(config: RunnerConfig): boolean {
	if (config.RUNNER_TOKEN) return true;
	if (!LOOPBACK.test(config.RUNNER_HTTP_HOST))
		throw new ConfigError(
			`RUNNER_TOKEN must be set: the control API would listen on ${config.RUNNER_HTTP_HOST}, not only on loopback`,
		);
	return false;
}

/** What `start` and `worker` say when they have no Redis: where to set it, and how to get a throwaway one. */
const NO_REDIS =
	'REDIS_URL must be set to the Redis the runner keeps its campaigns in, ' +
	'e.g. redis://redis:6379 (or REDIS_CLUSTER_NODES for a Redis Cluster), ' +
	'with appendonly yes. To try the runner without one: ' +
	'`convo-runner start --dev-redis` starts a throwaway redis-server with no persistence ' +
	'(everything is lost when the process ends), as `npm start` does in the repository.';

/** Every setting a process needs, checked before it starts a redis-server, connects or takes a job. */
function checkSettings(config: RunnerConfig, role: 'start' | 'worker', devRedis: boolean): void {
	const hasRedis = Boolean(config.REDIS_URL || config.REDIS_CLUSTER_NODES);
	if (devRedis && hasRedis)
		throw new ConfigError(
			'--dev-redis starts a throwaway Redis, ' +
				`but ${config.REDIS_URL ? 'REDIS_URL' : 'REDIS_CLUSTER_NODES'} is set too: use one or the other`,
		);
	if (!devRedis && !hasRedis) throw new ConfigError(NO_REDIS);
	requireService(config);
	if (role === 'start') wantsHttp(config);
}

/**
 * The --dev-redis notice: plain text on purpose, so it cannot
 * be missed among JSON lines (a container never uses the flag).
 */
function announceDevRedis(url: string): void {
	const rule = '='.repeat(78);
	process.stderr.write(
		`${rule}\nconvo-runner: --dev-redis: a throwaway redis-server at ${url}, with NO persistence.\n` +
			'Every campaign, ledger and schedule is lost when this process ends. Not for production: set REDIS_URL.\n' +
			`${rule}\n`,
	);
}

/**
 * `start` and `worker`: process jobs until SIGTERM or SIGINT. Order: every setting checked, the API
 * listening (a taken port fails here), Redis reached and checked (RUNNER_REQUIRE_AOF), and only
 * then the workers take jobs. stderr holds only log lines (pino's JSON, or one readable line each on
 * a terminal: log.ts), but for a fatal setup error and the --dev-redis notice.
 */
async function serve(role: 'start' | 'worker', options: { devRedis?: boolean } = {}): Promise<void> {
	const io = { json: false };
	let stopRedis: (() => Promise<void>) | undefined;
	try {
		let config = loadConfig();
		checkSettings(config, role, options.devRedis ?? false);
		if (options.devRedis) {
			const redis = await startPrivateRedis();
			stopRedis = redis.stop;
			config = { ...config, REDIS_URL: redis.url };
			announceDevRedis(redis.url);
		}
		const log = loggerFor({ level: config.LOG_LEVEL, levelAsked: process.env.LOG_LEVEL !== undefined, command: false });
		const context = await openContext(config, log, { withService: true });
		// Set once the workers run: /readyz answers 503 until then, and again once stopping.
		const started: { workers?: RunningRunner; stopping?: boolean } = {};
		let http: RunningHttp | undefined;
		let apiContext: RunnerContext | undefined;
		if (role === 'start' && wantsHttp(config)) {
			// The API's own connection fails fast (503) while the workers' waits out an outage.
			apiContext = await openContext(config, log, { withService: true, client: { waitMs: 0 } });
			// Loaded here, not at the top: fastify, bull-board and prom-client cost every other command
			// (a worker, `campaign status`) about a quarter of its start-up CPU, for nothing. require(),
			// not import(): the repository's bin runs these sources as CommonJS through tsx, where an
			// import() of an extensionless path fails; the bundle inlines either lazily.
			// eslint-disable-next-line @typescript-eslint/no-require-imports
			const { startServer }: typeof import('../http/server') = require('../http/server');
			http = await startServer(apiContext, {
				token: config.RUNNER_TOKEN as string,
				host: config.RUNNER_HTTP_HOST,
				port: config.RUNNER_HTTP_PORT,
				workersRunning: () => started.workers?.healthy() ?? false,
				stopping: () => started.stopping ?? false,
			});
			log.info({ url: http.url }, `control API and console at ${http.url}`);
		} else if (role === 'start') {
			log.info('control API and console are off: set RUNNER_TOKEN (16 characters or more) to serve them');
		}
		// After the API listens, so /healthz answers (and /readyz says why not) while a Redis that is
		// not up yet is waited for; before any worker takes a job, so RUNNER_REQUIRE_AOF stops it in time.
		await checkRedis(context.redis, log, { requireAof: config.RUNNER_REQUIRE_AOF });
		await warnOfOldLayout(context);
		// The handlers go in before the workers start: from then on the process may hold jobs, and its
		// heartbeat shows it running before runProcess returns, so a signal in between must stop it
		// cleanly too, not end it at once with nothing settled. Such a signal waits for the start to
		// finish (runProcess then has logged 'runner started'), within the same deadline.
		let workersStarted: () => void = () => undefined;
		const startedUp = new Promise<void>((resolve) => (workersStarted = resolve));
		const stop = async (signal: string) => {
			if (started.stopping) return;
			started.stopping = true;
			log.info({ signal }, 'signal received');
			// The whole stop is bounded: with Redis unreachable, closing queues and settling claims
			// would wait for it forever. Sends left claimed are found stalled by another process and
			// marked unknown there (the send locks, jobs.ts), never sent again.
			setTimeout(() => {
				log.error(
					{ deadlineMs: config.RUNNER_SHUTDOWN_DEADLINE },
					'could not stop cleanly within RUNNER_SHUTDOWN_DEADLINE (is Redis reachable?); exiting now',
				);
				void stopRedis?.();
				process.exit(1);
			}, config.RUNNER_SHUTDOWN_DEADLINE).unref();
			await startedUp;
			await http?.close();
			await started.workers?.stop();
			if (apiContext) await closeContext(apiContext);
			await closeContext(context);
			await stopRedis?.();
			process.exit(0);
		};
		process.on('SIGTERM', () => void stop('SIGTERM'));
		process.on('SIGINT', () => void stop('SIGINT'));
		started.workers = await runProcess(context, role);
		workersStarted();
	} catch (error) {
		fail(io, error);
		await stopRedis?.();
		process.exit(1);
	}
}

export function addServeCommands(program: Command): void {
	program
		.command('start')
		.description(
			'process jobs (sends, feeder, schedules) against REDIS_URL and serve the control API and console (RUNNER_TOKEN)',
		)
		.option(
			'--dev-redis',
			'start a throwaway redis-server with no persistence instead of REDIS_URL (trying it out; never in production)',
		)
		.action((options: { devRedis?: boolean }) => serve('start', { devRedis: Boolean(options.devRedis) }));
	program
		.command('worker')
		.description('process jobs against REDIS_URL; run more of these on more machines to scale out')
		.action(() => serve('worker'));
}
