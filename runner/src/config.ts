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
import { parseCapPolicy } from './capRules';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const durationMs = z
	.string()
	// Aborting: the transform below must not run on text that is not a duration.
	.regex(/^\d+(ms|s|m|h)?$/, { error: 'must be a duration like 3600s, 60m, 1h or 500ms', abort: true })
	.transform((text) => {
		const [, amount, unit = 's'] = /^(\d+)(ms|s|m|h)?$/.exec(text) as RegExpExecArray;
		return Number(amount) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
	});

const spoken = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

/**
 * An advanced timing (a lease, a heartbeat, a grace period): the default is what production runs
 * on; the bounds keep a typo from stalling the runner or making it spin. Tests shorten them.
 */
const timing = (fallback: number, min: number, max: number) =>
	durationMs
		.refine((ms) => ms >= min && ms <= max, { error: `must be between ${spoken(min)} and ${spoken(max)}` })
		.default(fallback);

const schema = z
	.object({
		REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
		/** Comma-separated host:port seeds of a Redis Cluster (instead of REDIS_URL). */
		REDIS_CLUSTER_NODES: z
			.string()
			.regex(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/, { error: 'must be host:port pairs separated by commas' })
			.optional(),
		/**
		 * Key prefix of every key and queue the runner writes: a plain name. The runner puts its own hash
		 * tags after it (keys.ts), so a Redis Cluster spreads numbers and collections over its masters;
		 * a tag in the prefix would pin every key to one slot, so braces are refused.
		 */
		RUNNER_PREFIX: z
			.string()
			.regex(/^[\w.-]+$/, {
				error:
					'must be a plain name like convo (letters, digits, ".", "_", "-"), without a {hash tag}: ' +
					'the runner tags its keys itself, so a Redis Cluster spreads them',
			})
			.default('convo'),
		/** Needed by processes that talk to the service (start, worker, reconcile); checked there. */
		CONVO_EXTERNAL_URL: z
			.url({ protocol: /^https?$/, error: 'must be the http(s) URL of the external API (ending /api/external/v2)' })
			.optional(),
		CONVO_API_KEY: z.string().min(1, { error: 'must not be empty: the API key of the external API' }).optional(),
		/**
		 * The messaging API (A1 message status), as the node's Convo API credential names it: its Base
		 * URL and Access Token. Delivery tracking asks A1 when both are set, else B7 only (tracking/tracking.ts).
		 */
		CONVO_BASE_URL: z
			.url({ protocol: /^https?$/, error: 'must be the http(s) URL of the messaging API (without /v1)' })
			.optional(),
		CONVO_ACCESS_TOKEN: z
			.string()
			.min(1, { error: 'must not be empty: the access token of the messaging API' })
			.optional(),
		/** When each sent message's delivery is checked, after its send: a comma list of durations, rising. */
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
			.default([60_000, 600_000, 3_600_000, 86_400_000]),
		/** Delivery checks per second, for the whole account (every process together); never taken from sends. */
		RUNNER_TRACKING_RATE: positiveInt(20),
		/**
		 * Whether this process makes delivery checks (`on`, the default) or only sends (`off`): a role,
		 * so send workers keep their CPU for sends while other processes check (README, "Delivery
		 * tracking"). With every process off, nothing is tracked.
		 */
		RUNNER_TRACKING: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
		/** Sends in flight per process. */
		RUNNER_CONCURRENCY: positiveInt(10),
		/** Sends per second per business number when a campaign does not say. */
		RUNNER_DEFAULT_RATE: positiveInt(60),
		/** A schedule's firing taken up later than this after its time is skipped and reported. */
		RUNNER_MAX_LATENESS: durationMs.default(3_600_000),
		/** Hard total deadline of one call to the service. */
		RUNNER_HTTP_DEADLINE: durationMs.default(10_000),
		/** How long SIGTERM waits for in-flight sends. */
		RUNNER_SHUTDOWN_DEADLINE: durationMs.default(20_000),
		/** Consecutive failed recipients after which a campaign pauses itself. */
		RUNNER_PAUSE_AFTER_FAILURES: positiveInt(50),
		/** Attempts for a recipient whose send provably did not reach the service (5xx, refused connection). */
		RUNNER_SEND_ATTEMPTS: positiveInt(5),
		/**
		 * Bearer token of the control API and the console; required
		 * unless the API listens on loopback (then one is generated).
		 */
		RUNNER_TOKEN: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
		/**
		 * Key webhook secrets are derived from (HMAC-SHA256(key, "webhook:" + id)); defaults to one
		 * derived from RUNNER_TOKEN. Every process that delivers events needs the same one.
		 */
		RUNNER_WEBHOOK_KEY: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
		/** Attempts per webhook delivery (exponential backoff from 1 s) before it is given up. */
		RUNNER_WEBHOOK_ATTEMPTS: positiveInt(8),
		/**
		 * Off by default: feed, source_url and webhook URLs reach public addresses only. `true` opens
		 * loopback, private, CGNAT and unique-local addresses; or a comma list of hosts, host:port,
		 * IPs ([::1]:port) and CIDR ranges that may be reached besides (net/policy.ts).
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
		RUNNER_HTTP_HOST: z.string().min(1).default('127.0.0.1'),
		/** Port of the control API and console served by `start`; 0 picks a free one. */
		RUNNER_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
		/**
		 * The only directory whose files the control API may name as a source (reindex `source`):
		 * checked after links and `..` are resolved, when the run is created and again when a worker
		 * opens the file. Unset: the API reads no local file at all. The CLI reads any path it can.
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
		/** Largest recipient upload accepted by the API. */
		RUNNER_UPLOAD_LIMIT_BYTES: positiveInt(50 * 1024 * 1024),
		/**
		 * An upload (a campaign's CSV/NDJSON body, a suppression
		 * import) that sends no byte for this long is ended with 408.
		 */
		RUNNER_UPLOAD_IDLE_TIMEOUT: durationMs.default(30_000),
		/**
		 * An upload may take this long plus 1 s for every RUNNER_UPLOAD_MIN_BYTES_PER_SECOND bytes it
		 * has sent (time the runner keeps it paused not counted); one still arriving then is ended with
		 * 408: a client that trickles would otherwise hold its connection forever.
		 */
		RUNNER_UPLOAD_DEADLINE: durationMs.default(60_000),
		RUNNER_UPLOAD_MIN_BYTES_PER_SECOND: positiveInt(1024),
		/** Connections the API holds open at once; past it, new ones are closed as they arrive. */
		RUNNER_MAX_CONNECTIONS: positiveInt(1000),
		/** Caps on what callers may pile into Redis (limits.ts); past one, a 4xx names the cap and this setting. */
		RUNNER_MAX_RECIPIENTS: positiveInt(1_000_000),
		RUNNER_MAX_DRAFTS: positiveInt(100),
		RUNNER_MAX_CAMPAIGN_SCHEDULES: positiveInt(100),
		RUNNER_MAX_REINDEX_SCHEDULES: positiveInt(100),
		RUNNER_MAX_QUEUED_RUNS: positiveInt(100),
		RUNNER_MAX_WEBHOOKS: positiveInt(100),
		/** Event receipts kept for the receivers' repeat check (webhooks/receipts.ts); past it the oldest are dropped. */
		RUNNER_MAX_RECEIPTS: positiveInt(100_000),
		/** Entries on the suppression list (audience/suppression.ts): an add past it is refused naming it. */
		RUNNER_MAX_SUPPRESSIONS: positiveInt(500_000),
		/** Sending numbers that hold a copy of the suppression list at once (those with a campaign not finished). */
		RUNNER_MAX_SENDING_NUMBERS: positiveInt(10),
		/** Longest webhook URL accepted. */
		RUNNER_MAX_URL_LENGTH: positiveInt(2048),
		/** Failed delivery attempts in a row after which a webhook is disabled (until enabled again). */
		RUNNER_WEBHOOK_DISABLE_AFTER: positiveInt(24),
		/**
		 * `true`: start and worker refuse to start unless Redis keeps an append-only file (`appendonly
		 * yes`), which the ledger's never-twice and never-lost guarantees need across a Redis restart.
		 * Unset or `false`: they only warn.
		 */
		RUNNER_REQUIRE_AOF: z
			.enum(['true', 'false'], { error: 'must be true or false' })
			.default('false')
			.transform((text) => text === 'true'),
		/**
		 * The events endpoint (POST/PUT /api/events/message-created) that takes the service's
		 * message_created deliveries: the header the dashboard's event trigger adds, and its value (a
		 * secret). Unless both are set the endpoint answers 404 (http/eventRoutes.ts).
		 */
		RUNNER_EVENTS_HEADER_NAME: z
			.string()
			.regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, {
				error: "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)",
			})
			.optional(),
		RUNNER_EVENTS_HEADER_VALUE: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
		/**
		 * Wrong secrets (tokens; events headers, counted apart) one client address may send within
		 * RUNNER_AUTH_FAILURE_PERIOD (from its first) before its wrong ones get 429 until the period
		 * ends; the right secret is always let in (http/auth.ts).
		 */
		RUNNER_AUTH_FAILURE_LIMIT: positiveInt(30),
		RUNNER_AUTH_FAILURE_PERIOD: durationMs.default(15 * 60_000),
		/**
		 * The business's frequency cap, for every number without its own (`cap set`): rules like
		 * 1/24h,3/7d (audience/cap.ts). Unset: no cap.
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
		/** The reply period: a reply belongs to the campaign that last messaged its phone within this time before it. */
		RUNNER_REPLY_PERIOD: durationMs.default(72 * 3_600_000),
		/**
		 * Keywords that, as the whole of an inbound message, put its sender on the suppression list
		 * (OPTOUT) or take it off (OPTIN): comma-separated, replacing the defaults (audience/keywords.ts).
		 * Matched after trimming, case folding, dropping accents and punctuation.
		 */
		RUNNER_OPTOUT_KEYWORDS: z.string().optional(),
		RUNNER_OPTIN_KEYWORDS: z.string().optional(),
		/**
		 * The business's numbers (digits with country code, comma-separated). Set: a campaign from any
		 * other number is refused, and a keyword sent to any other number changes nothing. Unset: the
		 * numbers the business has created a campaign from (audience/suppression.ts businessNumber).
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
		 * Advanced timings; the defaults suit production. A create under an Idempotency-Key holds its key
		 * this long unless its work renews it (every third of it): a create whose process died frees it
		 * within this time (core/campaigns.ts).
		 */
		RUNNER_IDEMPOTENCY_LEASE: timing(30_000, 1000, 3_600_000),
		/** A runner process beats this often; one silent for three beats is no longer listed (presence.ts). */
		RUNNER_HEARTBEAT: timing(5000, 200, 60_000),
		/**
		 * A reindex run holds its collection this long unless renewed (every third of it): a dead run's frees within it.
		 */
		RUNNER_REINDEX_LEASE: timing(30_000, 1000, 3_600_000),
		/**
		 * BullMQ's lock on send, control and tracking jobs, renewed while one runs: a dead process's job
		 * is seen stalled and taken up elsewhere within about twice this (jobs.ts).
		 */
		RUNNER_JOB_LOCK: timing(15_000, 2000, 600_000),
		/**
		 * BullMQ's lock on reindex runs, checked every half of it:
		 * a dead process's run resumes within about 1.5 times this.
		 */
		RUNNER_REINDEX_JOB_LOCK: timing(10_000, 2000, 600_000),
		/**
		 * A running campaign that made no progress for this long has its dead claims turned unknown and
		 * its pending recipients fed again (sending/feeder.ts); a claim still live is never touched.
		 */
		RUNNER_FEEDER_STALL: timing(15_000, 1000, 3_600_000),
		/**
		 * A claimed delivery check a process died before writing comes back after this; more than twice
		 * RUNNER_HTTP_DEADLINE plus 1 s, so a check still waiting for its answers is never claimed again.
		 */
		RUNNER_TRACKING_CLAIM_LEASE: timing(30_000, 2000, 3_600_000),
		/**
		 * Delivery tracking's tick lock, renewed between rounds: a dead holder's lapses after this (tracking/tracking.ts).
		 */
		RUNNER_TRACKING_LOCK: timing(15_000, 1000, 600_000),
		/**
		 * A recipient whose send failed in a way that proves it was not sent (5xx, a refused connection)
		 * is tried again after this, then twice as long after each next failure, each wait up to half
		 * shorter at random (jobs.ts); so is a send job after an error of its own.
		 */
		RUNNER_SEND_BACKOFF: timing(1000, 100, 60_000),
		/**
		 * A reindex call to the service that failed without an answer to go by (5xx, a timeout, a reset)
		 * is tried again after this, doubling up to 10 s; an upsert's wait up to half shorter at random (reindex/work.ts).
		 */
		RUNNER_REINDEX_BACKOFF: timing(500, 100, 60_000),
		LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
		/**
		 * Tests only: milliseconds added to the clock that send windows and campaign ends are read on
		 * (audience/windows.ts), so a test can stand at 19:59:45 somewhere without waiting for it. A
		 * campaign created with it keeps it (its hash's `clock_offset`), for every process and the
		 * claim's script alike. Refused when NODE_ENV is production.
		 */
		RUNNER_TEST_CLOCK_OFFSET_MS: z.coerce.number().int().default(0),
		NODE_ENV: z.string().optional(),
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

export type RunnerConfig = z.output<typeof schema>;

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
	const result = schema.safeParse(renamed.env);
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
