/**
 * The runner's environment, parsed once with zod: the only place that reads process.env. A missing
 * or wrong value stops the process with a message naming the variable. Each secret may instead come
 * from a file named by `<NAME>_FILE` (n8n's convention, for Docker and Kubernetes secrets).
 */
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { isIP } from 'node:net';

import { z } from 'zod/v4';

import { parseUrlPolicy } from './net/policy';
import { parseDailyLimit } from './dailyLimitRule';
import { parseCapPolicy } from './capRules';

/** `accepts`: what a value may be, in words, where the schema's type does not say it (CONFIG_SCHEMA). */
const positiveInt = (fallback: number) =>
	z.coerce.number().int().positive().default(fallback).meta({ accepts: 'a whole number, 1 or more' });

const durationMs = z
	.string()
	// Aborting: the transform below must not run on text that is not a duration.
	.regex(/^\d+(ms|s|m|h)?$/, { error: 'must be a duration like 3600s, 60m, 1h or 500ms', abort: true })
	.transform((text) => {
		const [, amount, unit = 's'] = /^(\d+)(ms|s|m|h)?$/.exec(text) as RegExpExecArray;
		return Number(amount) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
	});

/** A duration with its default written as the variable would hold it; the value is read in milliseconds. */
const duration = (fallback: string) =>
	durationMs.prefault(fallback).meta({ accepts: 'a duration: 500ms, 30s, 5m, 1h (a bare number is seconds)' });

const spoken = (ms: number) =>
	ms === 0 ? '0' : ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;

/**
 * An advanced timing (a lease, a heartbeat, a grace period): the default is what production runs
 * on; the bounds keep a typo from stalling the runner or making it spin. Tests shorten them.
 */
const timing = (fallback: string, min: number, max: number) =>
	durationMs
		.refine((ms) => ms >= min && ms <= max, { error: `must be between ${spoken(min)} and ${spoken(max)}` })
		.prefault(fallback)
		.meta({ accepts: `a duration from ${spoken(min)} to ${spoken(max)}`, advanced: true });

/**
 * Every variable the runner reads. docs/reference/configuration.md is generated from it (npm run
 * docs:reference): each setting's comment is its description there, written for the operator who
 * sets it, and its default and `accepts` come from the schema; `advanced` timings get a table of
 * their own.
 */
export const CONFIG_SCHEMA = z
	.object({
		/** The Redis the runner keeps everything in (Redis 6.2 or later); the URL may hold its password. */
		REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
		/** A Redis Cluster instead of REDIS_URL: host:port seeds, comma-separated. */
		REDIS_CLUSTER_NODES: z
			.string()
			.regex(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/, { error: 'must be host:port pairs separated by commas' })
			.optional(),
		/**
		 * The user REDIS_CLUSTER_NODES' nodes are reached as (a Redis 6 ACL user); unset, the default
		 * user. REDIS_URL carries its own (redis://user:password@host:port).
		 */
		REDIS_CLUSTER_USERNAME: z.string().min(1).optional(),
		/** The password of REDIS_CLUSTER_NODES' nodes (their requirepass, or the ACL user's). */
		REDIS_CLUSTER_PASSWORD: z.string().min(1).optional(),
		/**
		 * `true`: REDIS_CLUSTER_NODES' nodes are reached over TLS, each node's certificate checked
		 * against the name it is reached by (NODE_EXTRA_CA_CERTS adds a private CA). REDIS_URL says it
		 * with rediss://.
		 */
		REDIS_CLUSTER_TLS: z
			.enum(['true', 'false'], { error: 'must be true or false' })
			.default('false')
			.transform((text) => text === 'true'),
		/**
		 * Key prefix of every key and queue the runner writes, a plain name: it keeps deployments on one
		 * Redis apart. The runner puts its own hash tags after it, so a Redis Cluster spreads numbers and
		 * collections over its masters; braces (a tag that would pin every key to one slot) are refused.
		 */
		RUNNER_PREFIX: z
			.string()
			.regex(/^[\w.-]+$/, {
				error:
					'must be a plain name like convo (letters, digits, ".", "_", "-"), without a {hash tag}: ' +
					'the runner tags its keys itself, so a Redis Cluster spreads them',
			})
			.default('convo'),
		/**
		 * The service's external API (ending /api/external/v2): needed by the processes that talk to the
		 * service (start, worker, reconcile), which check it at start.
		 */
		CONVO_EXTERNAL_URL: z
			.url({ protocol: /^https?$/, error: 'must be the http(s) URL of the external API (ending /api/external/v2)' })
			.optional(),
		/** The API key of the external API, with CONVO_EXTERNAL_URL. */
		CONVO_API_KEY: z.string().min(1, { error: 'must not be empty: the API key of the external API' }).optional(),
		/**
		 * The messaging API's Base URL (without /v1), as the node's Convo API credential names it. With
		 * CONVO_ACCESS_TOKEN, delivery tracking asks it for each message's status; without, it reads the
		 * conversations only (and cannot tell delivered from sent).
		 */
		CONVO_BASE_URL: z
			.url({ protocol: /^https?$/, error: 'must be the http(s) URL of the messaging API (without /v1)' })
			.optional(),
		/** The messaging API's Access Token, with CONVO_BASE_URL. */
		CONVO_ACCESS_TOKEN: z
			.string()
			.min(1, { error: 'must not be empty: the access token of the messaging API' })
			.optional(),
		/** When each sent message's delivery is checked, after its send: a comma list of durations, rising (at most 20). */
		RUNNER_TRACKING_SCHEDULE: z
			.string()
			.regex(/^\d+(ms|s|m|h|d)(,\d+(ms|s|m|h|d))*$/, {
				error: 'must be durations with units, rising, comma-separated, like 1m,10m,1h,24h',
			})
			.transform((text, ctx) => {
				const steps = text.split(',').map((part) => {
					const [, amount, unit] = /^(\d+)(ms|s|m|h|d)$/.exec(part) as RegExpExecArray;
					return Number(amount) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as 'ms'];
				});
				if (steps.some((step, i) => i > 0 && step <= steps[i - 1]) || steps.length > 20) {
					ctx.issues.push({
						code: 'custom',
						input: text,
						message: 'must list at most 20 durations, each longer than the one before, like 1m,10m,1h,24h',
					});
					return z.NEVER;
				}
				return steps;
			})
			.prefault('1m,10m,1h,24h'),
		/** Delivery checks per second, for the whole account (every process together); never taken from sends. */
		RUNNER_TRACKING_RATE: positiveInt(20),
		/**
		 * Whether this process makes delivery checks (`on`) or only sends (`off`): a role, so send
		 * workers keep their CPU for sends while other processes check. With every process off, nothing
		 * is tracked.
		 */
		RUNNER_TRACKING: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
		/** Sends in flight at once per process (a reindex run's upserts too). */
		RUNNER_CONCURRENCY: positiveInt(10),
		/** Sends per second per business number when a campaign does not say. */
		RUNNER_DEFAULT_RATE: positiveInt(60),
		/**
		 * Time the start gate adds to each second it counts a number's rate over, for the way from the
		 * runner to the service: a number sustains about 1 / (1 + room) of its rate (0.958 at 40ms) and
		 * stays under it in every second at the service while sends bunch on the way by less than the
		 * room. Smaller holds more of the rate on machines with cores to spare (docs/benchmarks.md,
		 * benchmark 14); set the same on every process of a deployment.
		 */
		RUNNER_RATE_ROOM: timing('40ms', 10, 200),
		/**
		 * A send job sends its recipients in volleys: as many at once as its number's rate has in this
		 * time (at most 20), 10 at 1,000/s and one below 200/s at the default. A volley is claimed in
		 * one call to Redis and settled in one, its sends go out together, and the number's clock moves
		 * on by one place per send, so the rate is the same. 0 sends one at a time at any rate.
		 */
		RUNNER_SEND_VOLLEY: timing('10ms', 0, 1000),
		/** A schedule's firing taken up later than this after its time is skipped and reported. */
		RUNNER_MAX_LATENESS: duration('1h'),
		/** Hard total deadline of one call to the service. */
		RUNNER_HTTP_DEADLINE: duration('10s'),
		/** How long SIGTERM waits for in-flight sends. */
		RUNNER_SHUTDOWN_DEADLINE: duration('20s'),
		/** Consecutive failed recipients after which a campaign pauses itself. */
		RUNNER_PAUSE_AFTER_FAILURES: positiveInt(50),
		/**
		 * Distinct recipients in a row whose sends the service blocked for the template or the sending
		 * number, after which the campaign and every other running campaign on that template or number pause.
		 * Only a send started after the last refusal breaks the row, not one answered after it.
		 */
		RUNNER_PAUSE_AFTER_BLOCKED: positiveInt(3),
		/** How long a number waits after the service's messaging limit refused a new customer. */
		RUNNER_MESSAGING_LIMIT_HOLD: duration('10m'),
		/** Attempts for a recipient whose send provably did not reach the service (5xx, refused connection). */
		RUNNER_SEND_ATTEMPTS: positiveInt(5),
		/**
		 * Bearer token of the control API and the console (16 characters or more); required unless the
		 * API listens on loopback (then one is generated).
		 */
		RUNNER_TOKEN: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
		/**
		 * Key webhook secrets are derived from (HMAC-SHA256(key, "webhook:" + id)), 16 characters or
		 * more; unset, one derived from RUNNER_TOKEN. Every process that delivers events needs the same
		 * one: set it to change RUNNER_TOKEN without changing the secrets.
		 */
		RUNNER_WEBHOOK_KEY: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
		/** Attempts per webhook delivery (exponential backoff from 1 s) before it is given up. */
		RUNNER_WEBHOOK_ATTEMPTS: positiveInt(8),
		/**
		 * Unset or `false`: feed, source_url and webhook URLs reach public addresses only. `true` opens
		 * loopback, private, CGNAT and unique-local addresses; or a comma list of hosts, host:port, IPs
		 * ([::1]:port) and CIDR ranges that may be reached besides.
		 */
		RUNNER_ALLOW_PRIVATE_URLS: z
			.string()
			.optional()
			.transform((text, ctx) => {
				try {
					return parseUrlPolicy(text);
				} catch (error) {
					ctx.issues.push({
						code: 'custom',
						input: text,
						message:
							'must be true, false, or a comma list of hosts, host:port, IP addresses and CIDR ranges: ' +
							`${(error as Error).message}`,
					});
					return z.NEVER;
				}
			}),
		/** Address the control API and console listen on; off loopback, RUNNER_TOKEN is required. */
		RUNNER_HTTP_HOST: z.string().min(1).default('127.0.0.1'),
		/** Port of the control API and console served by `start`; 0 picks a free one. */
		RUNNER_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
		/**
		 * The only directory whose files the control API may name as a source (reindex `source`), an
		 * absolute path: checked after links and `..` are resolved, when the run is created and again
		 * when a worker opens the file. Unset: the API reads no local file at all. The CLI reads any path
		 * it can.
		 */
		RUNNER_SOURCE_DIR: z
			.string()
			.min(1, { error: 'must be an absolute directory path, or unset' })
			.refine(isAbsolute, { error: 'must be an absolute directory path' })
			.optional(),
		/**
		 * The reverse proxy in front of the API, as addresses or CIDR ranges (comma-separated; also
		 * loopback, linklocal, uniquelocal): its X-Forwarded-For and X-Forwarded-Proto are then believed.
		 * Unset: no proxy is trusted, the client address is the peer's, the protocol plain HTTP.
		 */
		RUNNER_TRUST_PROXY: z
			.string()
			.refine(
				(text) =>
					text
						.split(',')
						.every(
							(entry) =>
								/^(loopback|linklocal|uniquelocal)$/.test(entry.trim()) ||
								isIP(entry.trim().replace(/\/\d{1,3}$/, '')) !== 0,
						),
				{
					error: 'must be the proxy addresses or CIDR ranges, comma-separated (or loopback, linklocal, uniquelocal)',
				},
			)
			.optional(),
		/**
		 * The address users open the console at; when it is https://, the session cookie is Secure whatever the proxy says.
		 */
		RUNNER_PUBLIC_URL: z
			.url({ protocol: /^https?$/, error: 'must be the http(s) URL users open the console at' })
			.optional(),
		/** Largest upload the API accepts, in bytes (a campaign's CSV or NDJSON body, a suppression import). */
		RUNNER_UPLOAD_LIMIT_BYTES: positiveInt(50 * 1024 * 1024),
		/** An upload that sends no byte for this long is ended with 408. */
		RUNNER_UPLOAD_IDLE_TIMEOUT: duration('30s'),
		/**
		 * An upload may take this long plus 1 s for every RUNNER_UPLOAD_MIN_BYTES_PER_SECOND bytes it
		 * has sent (time the runner keeps it paused not counted); one still arriving then is ended with
		 * 408: a client that trickles would otherwise hold its connection forever.
		 */
		RUNNER_UPLOAD_DEADLINE: duration('60s'),
		/** With RUNNER_UPLOAD_DEADLINE: every this many bytes an upload has sent give it 1 s more. */
		RUNNER_UPLOAD_MIN_BYTES_PER_SECOND: positiveInt(1024),
		/**
		 * Connections the API holds open at once, idle keep-alive ones included; past it, new ones are
		 * closed as they arrive.
		 */
		RUNNER_MAX_CONNECTIONS: positiveInt(1000),
		/** Rows per campaign: inline rows, an upload, a source, a draft's chunks together, each schedule's firing. */
		RUNNER_MAX_RECIPIENTS: positiveInt(1_000_000),
		/** Drafts not yet started (started or cancelled ones free their place). */
		RUNNER_MAX_DRAFTS: positiveInt(100),
		/** Campaign cron schedules. */
		RUNNER_MAX_CAMPAIGN_SCHEDULES: positiveInt(100),
		/** Reindex cron schedules. */
		RUNNER_MAX_REINDEX_SCHEDULES: positiveInt(100),
		/** Reindex runs waiting for a worker. */
		RUNNER_MAX_QUEUED_RUNS: positiveInt(100),
		/** Webhook registrations. */
		RUNNER_MAX_WEBHOOKS: positiveInt(100),
		/** Event receipts kept for the receivers' repeat check, all webhooks together; past it the oldest are dropped. */
		RUNNER_MAX_RECEIPTS: positiveInt(100_000),
		/** Entries on the suppression list: an add past it is refused naming this setting. */
		RUNNER_MAX_SUPPRESSIONS: positiveInt(500_000),
		/** Sending numbers that hold a copy of the suppression list at once (those with a campaign not finished). */
		RUNNER_MAX_SENDING_NUMBERS: positiveInt(10),
		/** Longest webhook URL accepted, in characters. */
		RUNNER_MAX_URL_LENGTH: positiveInt(2048),
		/** Failed delivery attempts in a row after which a webhook is disabled (until enabled again). */
		RUNNER_WEBHOOK_DISABLE_AFTER: positiveInt(24),
		/**
		 * `true`: start and worker refuse to start unless Redis keeps an append-only file (`appendonly
		 * yes`), which the ledger's never-twice and never-lost guarantees need across a Redis restart.
		 * `false`: they only warn.
		 */
		RUNNER_REQUIRE_AOF: z
			.enum(['true', 'false'], { error: 'must be true or false' })
			.default('false')
			.transform((text) => text === 'true'),
		/**
		 * The header the service's message_created deliveries carry to the events endpoint (POST/PUT
		 * /api/events/message-created), as its dashboard's event trigger adds it. Unless it and
		 * RUNNER_EVENTS_HEADER_VALUE are set, the endpoint answers 404.
		 */
		RUNNER_EVENTS_HEADER_NAME: z
			.string()
			.regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, {
				error: "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)",
			})
			.optional(),
		/** That header's value, a secret of 16 characters or more. */
		RUNNER_EVENTS_HEADER_VALUE: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
		/**
		 * Wrong secrets (tokens; events headers, counted apart) one client address may send within
		 * RUNNER_AUTH_FAILURE_PERIOD (from its first) before its wrong ones get 429 until the period
		 * ends; the right secret is always let in.
		 */
		RUNNER_AUTH_FAILURE_LIMIT: positiveInt(30),
		/** The period RUNNER_AUTH_FAILURE_LIMIT counts wrong secrets in. */
		RUNNER_AUTH_FAILURE_PERIOD: duration('15m'),
		/**
		 * The business's frequency cap, for every number without its own (`cap set`): rules like
		 * 1/24h,3/7d. Unset: no cap.
		 */
		RUNNER_FREQUENCY_CAP: z
			.string()
			.optional()
			.superRefine((text, ctx) => {
				if (text === undefined) return;
				try {
					parseCapPolicy(text, 'RUNNER_FREQUENCY_CAP');
				} catch (error) {
					// The message names the variable first; loadConfig puts the name in front of it again.
					ctx.issues.push({
						code: 'custom',
						input: text,
						message: (error as Error).message.replace(/^RUNNER_FREQUENCY_CAP(: | )/, (_, sep: string) =>
							sep === ': ' ? 'is wrong: ' : '',
						),
					});
				}
			}),
		/**
		 * The business's daily messaging limit, for as long as none is set (`budget set`): how many
		 * distinct customers every campaign and schedule firing together may message in a rolling 24 hours
		 * (250, 2000, 10000, 100000 or `unlimited`, the channel's tiers). Unset: unlimited.
		 */
		RUNNER_DAILY_LIMIT: z
			.string()
			.optional()
			.superRefine((text, ctx) => {
				if (text === undefined) return;
				try {
					parseDailyLimit(text, 'RUNNER_DAILY_LIMIT');
				} catch (error) {
					ctx.issues.push({
						code: 'custom',
						input: text,
						message: (error as Error).message.replace(/^RUNNER_DAILY_LIMIT /, ''),
					});
				}
			}),
		/** The reply period: a reply belongs to the campaign that last messaged its phone within this time before it. */
		RUNNER_REPLY_PERIOD: duration('72h'),
		/**
		 * Keywords that, as the whole of an inbound message, put its sender on the suppression list:
		 * comma-separated, replacing the defaults. Matched after trimming, case folding, dropping accents
		 * and punctuation.
		 */
		RUNNER_OPTOUT_KEYWORDS: z.string().optional(),
		/** Keywords that take a keyword's entry off the suppression list, as RUNNER_OPTOUT_KEYWORDS puts it on. */
		RUNNER_OPTIN_KEYWORDS: z.string().optional(),
		/**
		 * The business's numbers (digits with country code, comma-separated). Set: a campaign from any
		 * other number is refused, and a keyword sent to any other number changes nothing. Unset: the
		 * numbers the business has created a campaign from.
		 */
		RUNNER_NUMBERS: z
			.string()
			.optional()
			.transform((text, ctx) => {
				if (text === undefined) return undefined;
				const numbers = text.split(',').map((entry) => entry.trim().replace(/^\+/, ''));
				if (numbers.some((entry) => !/^\d{8,15}$/.test(entry))) {
					ctx.issues.push({
						code: 'custom',
						input: text,
						message: 'must be the business numbers, digits with country code (8 to 15), comma-separated',
					});
					return z.NEVER;
				}
				return numbers;
			}),
		/**
		 * A create under an Idempotency-Key holds its key this long unless its work renews it (every
		 * third of it): a create whose process died frees it within this time.
		 */
		RUNNER_IDEMPOTENCY_LEASE: timing('30s', 1000, 3_600_000),
		/** A runner process beats this often; one silent for three beats is no longer listed. */
		RUNNER_HEARTBEAT: timing('5s', 200, 60_000),
		/**
		 * A reindex run holds its collection this long unless renewed (every third of it): a dead run's frees within it.
		 */
		RUNNER_REINDEX_LEASE: timing('30s', 1000, 3_600_000),
		/**
		 * BullMQ's lock on send, control and tracking jobs, renewed while one runs: a dead process's job
		 * is seen stalled and taken up elsewhere within about twice this.
		 */
		RUNNER_JOB_LOCK: timing('15s', 2000, 600_000),
		/**
		 * BullMQ's lock on reindex runs, checked every half of it:
		 * a dead process's run resumes within about 1.5 times this.
		 */
		RUNNER_REINDEX_JOB_LOCK: timing('10s', 2000, 600_000),
		/**
		 * A running campaign that made no progress for this long has its dead claims turned unknown and
		 * its pending recipients fed again; a claim still live is never touched.
		 */
		RUNNER_FEEDER_STALL: timing('15s', 1000, 3_600_000),
		/**
		 * Added to the daily limit's 24 hours: a counted customer drops out this long after the
		 * service forgets it, since the runner counts a send from its claim and the service from its arrival.
		 */
		RUNNER_DAILY_LIMIT_MARGIN: timing('60s', 0, 3_600_000),
		/**
		 * A campaign waiting for the daily limit looks again at least this often, so a limit raised
		 * (or lifted) lets it go on within this time rather than when the next customer can be counted.
		 */
		RUNNER_DAILY_LIMIT_RECHECK: timing('60s', 100, 3_600_000),
		/**
		 * A claimed delivery check a process died before writing comes back after this; more than twice
		 * RUNNER_HTTP_DEADLINE plus 1 s, so a check still waiting for its answers is never claimed again.
		 */
		RUNNER_TRACKING_CLAIM_LEASE: timing('30s', 2000, 3_600_000),
		/**
		 * The feeder's lock, held by one process's pass at a time and renewed while it runs: a process
		 * killed mid-pass stops the feeding of every number for this long at most.
		 */
		RUNNER_FEEDER_LOCK: timing('5s', 1000, 600_000),
		/** Delivery tracking's tick lock, renewed between rounds: a dead holder's lapses after this. */
		RUNNER_TRACKING_LOCK: timing('15s', 1000, 600_000),
		/**
		 * A recipient whose send failed in a way that proves it was not sent (5xx, a refused connection)
		 * is tried again after this, then twice as long after each next failure, each wait up to half
		 * shorter at random; so is a send job after an error of its own.
		 */
		RUNNER_SEND_BACKOFF: timing('1s', 100, 60_000),
		/**
		 * A reindex call to the service that failed without an answer to go by (5xx, a timeout, a reset)
		 * is tried again after this, doubling up to 10 s; an upsert's wait up to half shorter at random.
		 */
		RUNNER_REINDEX_BACKOFF: timing('500ms', 100, 60_000),
		/**
		 * Least level of the log lines written (pino JSON on stderr, one readable line each when stderr
		 * is a terminal).
		 */
		LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
		/**
		 * Tests only: milliseconds added to the clock that send windows and campaign ends are read on,
		 * so a test can stand at 19:59:45 somewhere without waiting for it. A campaign created with it
		 * keeps it, for every process alike. Refused when NODE_ENV is production.
		 */
		RUNNER_TEST_CLOCK_OFFSET_MS: z.coerce.number().int().default(0),
		/** `production` refuses RUNNER_TEST_CLOCK_OFFSET_MS. */
		NODE_ENV: z.string().optional(),
	})
	.superRefine((config, ctx) => {
		if (config.REDIS_CLUSTER_NODES) return;
		const given = [
			config.REDIS_CLUSTER_USERNAME && 'REDIS_CLUSTER_USERNAME',
			config.REDIS_CLUSTER_PASSWORD && 'REDIS_CLUSTER_PASSWORD',
			config.REDIS_CLUSTER_TLS && 'REDIS_CLUSTER_TLS',
		].filter((name): name is string => Boolean(name));
		for (const name of given)
			ctx.issues.push({
				code: 'custom',
				input: config,
				path: [name],
				message:
					'is for REDIS_CLUSTER_NODES, which is not set: REDIS_URL carries its own ' +
					'(redis://user:password@host:port, rediss:// for TLS)',
			});
	})
	.refine((config) => config.RUNNER_TEST_CLOCK_OFFSET_MS === 0 || config.NODE_ENV !== 'production', {
		path: ['RUNNER_TEST_CLOCK_OFFSET_MS'],
		error: "is for tests only: it moves the send windows' clock, and is refused when NODE_ENV is production",
	})
	.refine((config) => config.RUNNER_TRACKING_CLAIM_LEASE > 2 * config.RUNNER_HTTP_DEADLINE + 1000, {
		path: ['RUNNER_TRACKING_CLAIM_LEASE'],
		error:
			'must be more than twice RUNNER_HTTP_DEADLINE plus 1s ' +
			'(a delivery check makes up to two calls after waiting up to a second for its place): ' +
			'a check still waiting for its answer would be claimed again',
	});

export type RunnerConfig = z.output<typeof CONFIG_SCHEMA>;

export class ConfigError extends Error {}

/**
 * The settings that hold secrets: each may be given as `<NAME>_FILE`, the path of a file holding the
 * value (REDIS_URL too: it may carry a password).
 */
export const SECRET_SETTINGS = [
	'CONVO_API_KEY',
	'CONVO_ACCESS_TOKEN',
	'RUNNER_TOKEN',
	'RUNNER_WEBHOOK_KEY',
	'RUNNER_EVENTS_HEADER_VALUE',
	'REDIS_URL',
	'REDIS_CLUSTER_PASSWORD',
] as const;

/**
 * Settings renamed so that "window" keeps one sense, the send window (docs/architecture.md,
 * Glossary): the old name still works, and when both are set the new one wins.
 */
export const RENAMED_SETTINGS = {
	RUNNER_AUTH_FAILURE_PERIOD: 'RUNNER_AUTH_FAILURE_WINDOW',
	RUNNER_REPLY_PERIOD: 'RUNNER_REPLY_WINDOW',
} as const;

/** The environment with each renamed setting given under its old name only moved to its new name. */
function readOldNames(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; oldName: Map<string, string> } {
	const resolved: NodeJS.ProcessEnv = { ...env };
	const oldName = new Map<string, string>();
	for (const [name, old] of Object.entries(RENAMED_SETTINGS)) {
		if (env[name] || !env[old]) continue;
		resolved[name] = env[old];
		oldName.set(name, old);
	}
	return { env: resolved, oldName };
}

/**
 * The environment with every `<NAME>_FILE` replaced by the file's content (trailing line breaks
 * trimmed, as an editor or `echo` leaves one). An empty variable counts as unset, as a compose file's
 * `${NAME:-}` gives. Problems are named by variable; a file's content never appears in one.
 */
function readSecretFiles(
	env: NodeJS.ProcessEnv,
	problems: string[],
): { env: NodeJS.ProcessEnv; fromFile: Set<string> } {
	const resolved: NodeJS.ProcessEnv = { ...env };
	const fromFile = new Set<string>();
	for (const name of SECRET_SETTINGS) {
		const fileSetting = `${name}_FILE`;
		const path = env[fileSetting];
		if (!path) continue;
		if (env[name]) {
			problems.push(
				`${name} and ${fileSetting} are both set: set only one (${fileSetting} names a file holding the value)`,
			);
			continue;
		}
		try {
			resolved[name] = readFileSync(path, 'utf8').replace(/[\r\n]+$/, '');
			fromFile.add(name);
		} catch (error) {
			// Node's message without the trailing ", open '<path>'": the path is said once already.
			const reason = (error as Error).message.replace(/, \w+ '.*'$/, '');
			problems.push(`${fileSetting} names a file that cannot be read (${path}): ${reason}`);
		}
	}
	return { env: resolved, fromFile };
}

/** Reads the environment once; every problem is listed, each naming its variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RunnerConfig {
	const problems: string[] = [];
	const secrets = readSecretFiles(env, problems);
	const renamed = readOldNames(secrets.env);
	const result = CONFIG_SCHEMA.safeParse(renamed.env);
	if (result.success && problems.length === 0) return result.data;
	for (const issue of result.error?.issues ?? []) {
		const name = String(issue.path[0]);
		const old = renamed.oldName.get(name);
		const named = secrets.fromFile.has(name)
			? `${name} (read from ${name}_FILE)`
			: old
				? `${old} (the old name of ${name})`
				: name;
		problems.push(`${named} ${issue.message}`);
	}
	throw new ConfigError(`The runner's environment is not valid:\n  ${problems.join('\n  ')}`);
}
