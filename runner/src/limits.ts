/**
 * What one caller may pile into Redis, which runs with `noeviction`: every cap is a setting of
 * config.ts with a default, and a request past one gets a 4xx naming the cap and its setting
 * (LimitError; the API answers its status, the CLI prints the message).
 *
 *   RUNNER_MAX_RECIPIENTS            rows per campaign (a create, an upload, a draft's chunks, a schedule's firing)
 *   RUNNER_MAX_DRAFTS                drafts not yet started
 *   RUNNER_MAX_CAMPAIGN_SCHEDULES    campaign cron schedules
 *   RUNNER_MAX_REINDEX_SCHEDULES     reindex cron schedules
 *   RUNNER_MAX_QUEUED_RUNS           reindex runs waiting for a worker
 *   RUNNER_MAX_WEBHOOKS              webhook registrations (and RUNNER_MAX_URL_LENGTH for their URLs)
 *   RUNNER_MAX_SUPPRESSIONS          suppression list entries (audience/suppression.ts)
 *   RUNNER_MAX_SENDING_NUMBERS       sending numbers holding a copy of the suppression list
 *
 * Counted registrations (drafts, schedules, webhooks) take their place in their sorted set with one
 * Lua script that counts and adds together, so requests at the same instant cannot pass a cap
 * between them; a registration that then fails gives its place back (release).
 */
import type { RunnerContext } from './context';
import { UserError } from './errors';
import { redisScript } from './redisScripts';
import type { SourceRecord } from './source';

/** A request past one of the caps: `status` is the API's answer, `field` the input it concerns. */
export class LimitError extends UserError {
	constructor(
		readonly status: 400 | 408 | 409 | 413 | 429,
		message: string,
		readonly field?: string,
	) {
		super(message);
	}
}

/**
 * Adds `member` to `set` unless the set already holds `max`; returns the count that was full, or undefined when added.
 */
export async function reserve(
	context: RunnerContext,
	set: string,
	max: number,
	member: string,
	score: number,
): Promise<number | undefined> {
	const run = redisScript(context.redis, 'reserveUnderLimit');
	const answer = Number(await run([set], [max, member, score]));
	return answer < 0 ? undefined : answer;
}

export async function release(context: RunnerContext, set: string, member: string): Promise<void> {
	await context.redis.zrem(set, member);
}

/** The message of a full count: what, how many, and the setting that raises it. */
export function fullMessage(what: string, count: number, max: number, setting: string): string {
	return (
		`${count} ${what} already exist; at most ${max} are allowed (${setting}): remove one first, ` +
		`or ask the operator to raise ${setting}`
	);
}

/**
 * Rows past RUNNER_MAX_RECIPIENTS stop the read: 413 naming `recipients` (the API field; the CLI's
 * --recipients), and create.ts writes nothing. The message never names the source: it may be a URL
 * with a token in it.
 */
export async function* cappedRows(records: AsyncIterable<SourceRecord>, max: number): AsyncGenerator<SourceRecord> {
	let count = 0;
	for await (const record of records) {
		if (++count > max) throw new LimitError(413, tooManyRows(max), 'recipients');
		yield record;
	}
}

export function tooManyRows(max: number): string {
	return (
		`recipients hold more than ${max} rows; a campaign may have at most ${max} recipients ` +
		'(RUNNER_MAX_RECIPIENTS). Nothing was added'
	);
}

/**
 * Reindex runs waiting for a worker: past RUNNER_MAX_QUEUED_RUNS a new one is refused with 429 until some have started.
 */
export async function checkQueuedRuns(context: RunnerContext): Promise<void> {
	const max = context.config.RUNNER_MAX_QUEUED_RUNS;
	const waiting = await context.queues.reindex.getJobCountByTypes('wait', 'prioritized');
	if (waiting >= max)
		throw new LimitError(
			429,
			`${waiting} reindex runs are already waiting for a worker; ` +
				`at most ${max} may wait (RUNNER_MAX_QUEUED_RUNS): try again once some have started`,
		);
}
