/**
 * convo-runner: the command line, a thin client of core.ts. Every command takes --json: then
 * stdout holds exactly one JSON document (logs go to stderr), exit 0 on success (including
 * "nothing to do"), 1 on an error, which is also the JSON document: { "error": "..." }.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

import { Command, Option } from 'commander';

import { ConfigError, loadConfig, type RunnerConfig } from '../config';
import type { RunnerContext } from '../context';
import * as core from '../core';
import { UserError } from '../core';
import { createLogger, type Logger } from '../log';
import { checkRedis, CLIENT_READY_MS, closeContext, isRedisUnavailable, openContext, RedisSettingsError, RedisUnavailable, requireService, runProcess, startPrivateRedis, type RunningRunner } from '../runtime';
import { startServer, type RunningHttp } from '../http/server';
import { follow, followReindex } from './follow';

interface Io {
	json: boolean;
}

function print(io: Io, value: unknown, human: () => string): void {
	process.stdout.write(io.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

/** Runs one command against the runner's Redis, with one way of reporting errors. */
async function withContext<T>(io: Io, options: { withService?: boolean }, work: (context: RunnerContext, config: RunnerConfig, log: Logger) => Promise<T>): Promise<void> {
	let context: RunnerContext | undefined;
	try {
		const config = loadConfig();
		const log = createLogger(config.LOG_LEVEL);
		context = await openContext(config, log, { withService: options.withService ?? false, client: { waitMs: CLIENT_READY_MS } });
		await work(context, config, log);
	} catch (error) {
		fail(io, error);
	} finally {
		if (context) await closeContext(context);
	}
}

function fail(io: Io, error: unknown): void {
	const unavailable = isRedisUnavailable(error) && !(error instanceof RedisUnavailable);
	const text = unavailable ? `Redis does not answer (${(error as Error).message})` : (error as Error).message;
	const known = error instanceof UserError || error instanceof ConfigError || error instanceof RedisSettingsError || isRedisUnavailable(error);
	const message = known ? text : `unexpected error: ${(error as Error).stack ?? String(error)}`;
	if (io.json) process.stdout.write(`${JSON.stringify({ error: text })}\n`);
	process.stderr.write(`convo-runner: ${message}\n`);
	process.exitCode = 1;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Whether `start` serves the control API and console: only with a token, which is required off loopback. */
function wantsHttp(config: RunnerConfig): boolean {
	if (config.RUNNER_TOKEN) return true;
	if (!LOOPBACK.test(config.RUNNER_HTTP_HOST)) throw new ConfigError(`RUNNER_TOKEN must be set: the control API would listen on ${config.RUNNER_HTTP_HOST}, not only on loopback`);
	return false;
}

/** What `start` and `worker` say when they have no Redis: where to set it, and how to get a throwaway one. */
const NO_REDIS =
	'REDIS_URL must be set to the Redis the runner keeps its campaigns in, e.g. redis://redis:6379 (or REDIS_CLUSTER_NODES for a Redis Cluster), ' +
	'with appendonly yes. To try the runner without one: `convo-runner start --dev-redis` starts a throwaway redis-server with no persistence ' +
	'(everything is lost when the process ends), as `npm start` does in the repository.';

/** Every setting a process needs, checked before it starts a redis-server, connects or takes a job. */
function checkSettings(config: RunnerConfig, role: 'start' | 'worker', devRedis: boolean): void {
	const hasRedis = Boolean(config.REDIS_URL || config.REDIS_CLUSTER_NODES);
	if (devRedis && hasRedis) throw new ConfigError(`--dev-redis starts a throwaway Redis, but ${config.REDIS_URL ? 'REDIS_URL' : 'REDIS_CLUSTER_NODES'} is set too: use one or the other`);
	if (!devRedis && !hasRedis) throw new ConfigError(NO_REDIS);
	requireService(config);
	if (role === 'start') wantsHttp(config);
}

/** The --dev-redis notice: plain text on purpose, so it cannot be missed among JSON lines (a container never uses the flag). */
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
 * then the workers take jobs. stderr holds only pino's JSON lines, but for a fatal setup error and
 * the --dev-redis notice.
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
		const log = createLogger(config.LOG_LEVEL);
		const context = await openContext(config, log, { withService: true });
		// Set once the workers run: /readyz answers 503 until then, and again once stopping.
		const started: { workers?: RunningRunner; stopping?: boolean } = {};
		let http: RunningHttp | undefined;
		let apiContext: RunnerContext | undefined;
		if (role === 'start' && wantsHttp(config)) {
			// The API's own connection fails fast (503) while the workers' waits out an outage.
			apiContext = await openContext(config, log, { withService: true, client: { waitMs: 0 } });
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
		const workers = await runProcess(context);
		started.workers = workers;
		const stop = async (signal: string) => {
			if (started.stopping) return;
			started.stopping = true;
			log.info({ signal }, 'signal received');
			// The whole stop is bounded: with Redis unreachable, closing queues and settling claims
			// would wait for it forever. Sends left claimed are found stalled by another process and
			// marked unknown there (queues.ts), never sent again.
			setTimeout(() => {
				log.error({ deadlineMs: config.RUNNER_SHUTDOWN_DEADLINE }, 'could not stop cleanly within RUNNER_SHUTDOWN_DEADLINE (is Redis reachable?); exiting now');
				void stopRedis?.();
				process.exit(1);
			}, config.RUNNER_SHUTDOWN_DEADLINE).unref();
			await http?.close();
			await workers.stop();
			if (apiContext) await closeContext(apiContext);
			await closeContext(context);
			await stopRedis?.();
			process.exit(0);
		};
		process.on('SIGTERM', () => void stop('SIGTERM'));
		process.on('SIGINT', () => void stop('SIGINT'));
	} catch (error) {
		fail(io, error);
		await stopRedis?.();
		process.exit(1);
	}
}

function describeCounts(status: core.CreateAnswer | Awaited<ReturnType<typeof core.campaignStatus>>): string {
	if ('counts' in status) {
		const c = status.counts;
		return `${status.id}: ${status.state} | sent ${c.sent}, failed ${c.failed}, unknown ${c.unknown}, not sent ${c.not_sent}, rejected ${c.rejected}, cancelled ${c.cancelled}, pending ${c.pending + c.claimed}${status.last_error ? ` | ${status.last_error}` : ''}`;
	}
	return JSON.stringify(status);
}

export function buildProgram(): Command {
	const program = new Command('convo-runner').description('Template campaigns (never twice, never lost, one rate per number) and search reindexing for Convo on BullMQ').showHelpAfterError();
	const json = () => new Option('--json', 'print one JSON document on stdout');

	program
		.command('start')
		.description('process jobs (sends, feeder, schedules) against REDIS_URL and serve the control API and console (RUNNER_TOKEN)')
		.option('--dev-redis', 'start a throwaway redis-server with no persistence instead of REDIS_URL (trying it out; never in production)')
		.action((options: { devRedis?: boolean }) => serve('start', { devRedis: Boolean(options.devRedis) }));
	program.command('worker').description('process jobs against REDIS_URL; run more of these on more machines to scale out').action(() => serve('worker'));

	const campaign = program.command('campaign').description('create, follow, control and report template campaigns');

	campaign
		.command('create')
		.description('store a campaign and print its id; the runner processes send it')
		.requiredOption('--template <id>', 'template id (UUID)')
		.requiredOption('--from <number>', 'sending business number, with country code')
		.option('--agent <id>', 'agent to assign to each conversation (UUID)')
		.requiredOption('--recipients <file-or-url>', 'CSV, JSON array or NDJSON with a phone column; other columns are template variables')
		.addOption(new Option('--format <format>', 'format of the recipients (default: from the name)').choices(['csv', 'json', 'ndjson']))
		.option('--rate <n>', 'sends per second for this number', (value) => Number(value))
		.option('--at <iso>', 'start once at this time (ISO 8601 with offset)')
		.option('--cron <expr>', 'repeat on this cron pattern; each run re-reads the recipients')
		.option('--tz <zone>', 'time zone of --cron (IANA name, default UTC)')
		.option('--wait', 'follow the campaign until it settles')
		.addOption(json())
		.action(async (options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const answer = await core.createCampaign(context, {
					templateId: options.template,
					from: options.from,
					agentId: options.agent,
					source: options.recipients,
					format: options.format,
					rate: options.rate,
					at: options.at,
					cron: options.cron,
					tz: options.tz,
				});
				if (answer.kind === 'schedule') {
					print(io, answer, () => `schedule ${answer.schedule.id}: ${answer.schedule.cron} (${answer.schedule.tz}); each run is a campaign of its own (campaign list)`);
					return;
				}
				const shouldFollow = options.wait || (!io.json && process.stderr.isTTY && answer.state === 'running');
				if (!shouldFollow) {
					print(io, answer, () => [`campaign ${answer.id}: ${answer.state}, ${answer.accepted} recipients, ${answer.rejected} rejected`, ...answer.rejections.map((r) => `  line ${r.line}: ${r.reason}`)].join('\n'));
					return;
				}
				process.stderr.write(`campaign ${answer.id}: ${answer.accepted} recipients, ${answer.rejected} rejected\n`);
				const final = await follow(context, answer.id);
				print(io, { ...answer, status: final }, () => describeCounts(final));
			});
		});

	campaign
		.command('status <id>')
		.description('state, counts per outcome, current rate and ETA')
		.option('--wait', 'follow until it settles')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const status = options.wait ? await follow(context, id) : await core.campaignStatus(context, id);
				print(io, status, () => describeCounts(status));
			});
		});

	campaign
		.command('list')
		.description('campaigns, newest first, and cron schedules')
		.addOption(json())
		.action(async (options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const campaigns = await core.listCampaigns(context);
				const schedules = await core.listSchedules(context);
				print(io, { campaigns, schedules }, () =>
					[...schedules.map((s) => `schedule ${s.id}: ${s.cron} (${s.tz}) from ${s.source}`), ...campaigns.map(describeCounts)].join('\n') || 'no campaigns',
				);
			});
		});

	for (const [name, act, description] of [
		['pause', core.pauseCampaign, 'stop new sends of this campaign on every process within a second'],
		['resume', core.resumeCampaign, 'continue a paused campaign'],
	] as const) {
		campaign
			.command(`${name} <id>`)
			.description(description)
			.addOption(json())
			.action(async (id: string, options) => {
				const io = { json: Boolean(options.json) };
				await withContext(io, {}, async (context) => {
					const state = await act(context, id);
					print(io, { id, state }, () => `${id}: ${state}`);
				});
			});
	}

	campaign
		.command('cancel <id>')
		.description('cancel a campaign (pending recipients become cancelled), or stop a cron schedule')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const result = await core.cancel(context, id);
				print(io, result, () => `${id}: cancelled`);
			});
		});

	campaign
		.command('rate <id> <per-second>')
		.description("change the campaign's sends per second while it runs")
		.addOption(json())
		.action(async (id: string, perSecond: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const rate = await core.setCampaignRate(context, id, Number(perSecond));
				print(io, { id, rate }, () => `${id}: ${rate} sends/s`);
			});
		});

	campaign
		.command('reconcile <id>')
		.description("resolve unknown recipients from the service's own records (sent or not_sent)")
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, { withService: true }, async (context) => {
				const result = await core.reconcileCampaign(context, id);
				print(io, { id, ...result }, () => `${id}: checked ${result.checked}; sent ${result.sent}, not sent ${result.not_sent}, still unknown ${result.still_unknown}`);
			});
		});

	campaign
		.command('retry <id>')
		.description('send again the recipients proven not sent')
		.requiredOption('--not-sent', 'retry the not_sent recipients (the only kind that may be sent again)')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const result = await core.retryNotSent(context, id);
				print(io, { id, ...result }, () => `${id}: ${result.requeued} recipients sent again; ${result.state}`);
			});
		});

	campaign
		.command('report <id>')
		.description('one row per recipient: line, phone, outcome, message_id, error, attempts, times')
		.addOption(new Option('--format <format>', 'json (default with --json) or csv').choices(['json', 'csv']))
		.option('--output <file>', 'write the report to a file instead of stdout')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			const format: 'json' | 'csv' = options.format ?? (io.json ? 'json' : 'csv');
			await withContext(io, {}, async (context) => {
				const out = options.output ? createWriteStream(options.output) : process.stdout;
				for await (const chunk of core.reportText(context, id, format)) {
					if (!out.write(chunk)) await once(out, 'drain');
				}
				if (options.output) {
					out.end();
					await once(out, 'finish');
				}
			});
		});

	addReindexCommands(program, json);
	return program;
}

function describeRun(status: core.ReindexOverview): string {
	const c = status.counts;
	return [
		`${status.id}: ${status.state} | collection ${status.collection} | read ${c.read}, unchanged ${c.unchanged}, created ${c.created}, updated ${c.updated}, deactivated ${c.deactivated}, rejected ${c.rejected}, failed ${c.failed}`,
		...(status.mismatched > 0 ? [`  ${status.mismatched} answers other than expected (reindex report ${status.id})`] : []),
		...(status.deactivation ? [`  deactivation ${status.deactivation}`] : []),
		...(status.last_error ? [`  ${status.last_error}`] : []),
	].join('\n');
}

/** `reindex run|status|report|list`: keep a search collection in sync with a feed. */
function addReindexCommands(program: Command, json: () => Option): void {
	const reindex = program.command('reindex').description('keep a search collection in sync with a feed, sending only what changed');

	reindex
		.command('run')
		.description('store a reindex run and print its id; the runner processes do the work')
		.requiredOption('--collection <id>', 'search collection id (UUID)')
		.requiredOption('--source <path-or-url>', 'the feed: a file or an http(s) URL')
		.addOption(new Option('--format <format>', 'format of the feed (default: from the name)').choices(['json', 'ndjson', 'csv']))
		.requiredOption('--id-field <field>', "the field holding each item's id (external_id)")
		.option('--embedding-json <file>', 'a JSON object sent as embedding_json with every item')
		.option('--deactivate-missing', 'after a complete read, deactivate the items the feed no longer holds')
		.option('--force', 'upsert every item, changed or not')
		.option('--rate <n>', `upserts per second (default ${core.DEFAULT_REINDEX_RATE})`, (value) => Number(value))
		.option('--cron <expr>', 'repeat on this cron pattern; each run re-reads the feed')
		.option('--tz <zone>', 'time zone of --cron (IANA name, default UTC)')
		.option('--wait', 'follow the run until it settles')
		.addOption(json())
		.action(async (options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const answer = await core.createReindex(context, {
					collection: options.collection,
					source: options.source,
					format: options.format,
					idField: options.idField,
					embeddingJson: options.embeddingJson,
					deactivateMissing: Boolean(options.deactivateMissing),
					force: Boolean(options.force),
					rate: options.rate,
					cron: options.cron,
					tz: options.tz,
				});
				if (answer.kind === 'schedule') {
					print(io, answer, () => `schedule ${answer.schedule.id}: ${answer.schedule.cron} (${answer.schedule.tz}); each run is a run of its own (reindex list)`);
					return;
				}
				const shouldFollow = options.wait || (!io.json && process.stderr.isTTY);
				const overview = shouldFollow ? await followReindex(context, answer.status.id) : answer.status;
				print(io, core.reindexStatusOf(overview), () => describeRun(overview));
				// A followed run that did not complete is not a success, though its status is printed.
				if (shouldFollow && overview.state !== 'completed') process.exitCode = 1;
			});
		});

	reindex
		.command('status <id>')
		.description('state, counts, current rate and ETA of a run')
		.option('--wait', 'follow until it settles')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const overview = options.wait ? await followReindex(context, id) : await core.reindexOverview(context, id);
				print(io, core.reindexStatusOf(overview), () => describeRun(overview));
			});
		});

	reindex
		.command('report <id>')
		.description('counts, what became of --deactivate-missing and why, rejected rows, failures, mismatches')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const report = await core.reindexReport(context, id);
				print(io, report, () =>
					[
						describeRun(report),
						...report.rejected_rows.map((row) => `  rejected: line ${row.line} ${row.reason}`),
						...report.failures.map((row) => `  failed: ${row.external_id}${row.line ? ` (line ${row.line})` : ''}: ${row.error}`),
						...report.mismatches.map((row) => `  mismatch: ${row.external_id}: expected ${row.expected}, the service said ${row.got}`),
						...report.foreign_items.map((external) => `  at the service, never sent by the runner (left alone): ${external}`),
						...(report.notes_truncated ? ['  (only the first notes of each kind are kept)'] : []),
					].join('\n'),
				);
			});
		});

	reindex
		.command('list')
		.description('reindex runs, newest first, and cron schedules')
		.addOption(json())
		.action(async (options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const runs = await core.listReindexRuns(context);
				const schedules = await core.listReindexSchedules(context);
				print(io, { runs, schedules }, () =>
					[...schedules.map((s) => `schedule ${s.id}: ${s.cron} (${s.tz}) ${s.settings.source} -> ${s.settings.collection}`), ...runs.map(describeRun)].join('\n') || 'no reindex runs',
				);
			});
		});

	reindex
		.command('unschedule <schedule-id>')
		.description('stop a cron schedule (its past runs stay)')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				if (!(await core.removeReindexSchedule(context, id))) throw new UserError(`No reindex schedule with id ${id}`);
				print(io, { id, removed: true }, () => `${id}: removed`);
			});
		});

	const webhook = program.command('webhook').description('URLs that receive signed events: campaign.finished, campaign.paused, reindex.finished');
	webhook
		.command('add <url>')
		.description('register a URL; prints its signing secret, this once (it is derived from RUNNER_WEBHOOK_KEY or RUNNER_TOKEN, never stored)')
		.requiredOption('--events <list>', 'comma-separated: campaign.finished, campaign.paused, reindex.finished')
		.option('--description <text>', 'a note for whoever reads the list')
		.addOption(json())
		.action(async (url: string, options: { events: string; description?: string; json?: boolean }) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const events = options.events.split(',').map((event) => event.trim()).filter(Boolean);
				const created = await core.createWebhook(context, { url, events: events as never, description: options.description });
				print(io, created, () => `${created.id}: ${created.url} (${created.events.join(', ')})\nsecret (shown this once): ${created.secret}`);
			});
		});
	webhook
		.command('list')
		.description('registered webhooks, oldest first (no secrets)')
		.addOption(json())
		.action(async (options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const webhooks = await core.listWebhooks(context);
				print(io, { webhooks }, () => webhooks.map((w) => `${w.id}: ${w.url} (${w.events.join(', ')})${w.description ? ` ${w.description}` : ''}${w.disabled_at ? ` DISABLED since ${w.disabled_at}: ${w.disabled_reason}` : ''}`).join('\n') || 'no webhooks');
			});
		});
	webhook
		.command('enable <id>')
		.description('enable a webhook that was disabled after failed deliveries: later events are delivered to it again')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				const enabled = await core.enableWebhook(context, id);
				print(io, enabled, () => `${id}: enabled`);
			});
		});
	webhook
		.command('remove <id>')
		.description('remove a webhook: no more deliveries to it, queued retries included')
		.addOption(json())
		.action(async (id: string, options) => {
			const io = { json: Boolean(options.json) };
			await withContext(io, {}, async (context) => {
				await core.removeWebhook(context, id);
				print(io, { id, removed: true }, () => `${id}: removed`);
			});
		});
}

/** The bin's entry: parses `argv` and reports a failure the way every command does. */
export function run(argv: string[]): Promise<unknown> {
	return buildProgram()
		.parseAsync(argv)
		.catch((error) => fail({ json: argv.includes('--json') }, error));
}

if (require.main === module) void run(process.argv);
