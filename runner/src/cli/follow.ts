/**
 * Following a campaign or a reindex run until it settles: a progress bar on a terminal
 * (cli-progress, on stderr so stdout keeps the command's result), a line every few seconds elsewhere.
 * Ctrl-C stops the following, not the job (exit 130).
 */
import { SingleBar } from 'cli-progress';

import type { RunnerContext } from '../context';
import { campaignStatus, type CampaignStatus } from '../core/campaigns';
import { liveRunners, runnerWhereabouts } from '../core/runners';
import { reindexOverview, SETTLED_REINDEX_STATES, type ReindexOverview } from '../core/reindex';

const eta = (seconds: number | null) =>
	seconds === null ? '?' : seconds < 90 ? `${seconds}s` : `${Math.round(seconds / 60)}m`;

/** Exit code of a follow stopped by Ctrl-C: 128 + SIGINT, as shells report it. */
const INTERRUPTED_EXIT = 130;

/**
 * What a followed job shows: whether it settled, its progress as done of total, its counts as text,
 * and the command that follows it again.
 */
interface View<S> {
	settled(status: S): boolean;
	total(status: S): number;
	done(status: S): number;
	counts(status: S): string;
	followAgain: string;
	/** What it is, for the warning that no runner process takes it ("campaign", "reindex run"). */
	kind: string;
}

/**
 * The warning that no runner process is alive on this command's
 * Redis and prefix: where it looked, and how to start one.
 */
function noRunnerWarning(context: RunnerContext, about: string, ending: string): string {
	const { redis, prefix } = runnerWhereabouts(context);
	return (
		`convo-runner: ${about}: no convo-runner process is alive on ${redis} with prefix ${prefix}; ` +
		`start one with \`convo-runner start\` (or \`worker\`) and the same REDIS_URL and RUNNER_PREFIX=${prefix}, ` +
		`or point this command at the Redis and prefix your runner uses.${ending}`
	);
}

/**
 * Says once on stderr, for a command that stores or lists work without following it, that no
 * runner process is alive on this Redis and prefix (their heartbeats, presence.ts): what it stored
 * would otherwise wait in silence, and a list would look as if nothing ever ran.
 */
export async function warnIfNoRunner(context: RunnerContext, about: string): Promise<void> {
	// The command's own work is done: a failed look leaves its answer as it is.
	const alive = await liveRunners(context).catch(() => undefined);
	if (alive?.length === 0) process.stderr.write(`${noRunnerWarning(context, about, '')}\n`);
}

/**
 * Says on stderr when no runner process is alive on this Redis and prefix (their heartbeats,
 * presence.ts), and again once one is: a campaign created under another prefix than the runner's
 * would otherwise wait in silence for good. The follow goes on either way: a runner may be starting.
 */
function presenceWatch(context: RunnerContext, kind: string, say: (line: string) => void): () => Promise<void> {
	let lastCheck = 0;
	let absent = false;
	return async () => {
		// Asked at once, then twice per heartbeat (RUNNER_HEARTBEAT), so a process starting is seen within a beat.
		if (Date.now() - lastCheck < context.config.RUNNER_HEARTBEAT / 2) return;
		lastCheck = Date.now();
		const alive = (await liveRunners(context)).length;
		if (alive === 0 && !absent) {
			say(noRunnerWarning(context, `no runner is taking this ${kind}`, ' Still waiting.'));
		} else if (alive > 0 && absent) {
			say(`convo-runner: ${alive} runner process${alive === 1 ? ' is' : 'es are'} alive now; following on.`);
		}
		absent = alive === 0;
	};
}

export interface FollowOptions {
	/** How often the status is read, ms (500). */
	intervalMs?: number;
	/** Written to stderr once Ctrl-C is listened for: the job's id line, which an operator may answer with Ctrl-C. */
	heading?: string;
}

async function followUntilSettled<S extends { state: string; rate: number; eta_seconds: number | null }>(
	context: RunnerContext,
	id: string,
	fetch: () => Promise<S>,
	view: View<S>,
	options: FollowOptions,
): Promise<S> {
	const tty = Boolean(process.stderr.isTTY);
	// Set once the first status is read; the Ctrl-C handler below stops it if it is there.
	const progress: { bar?: SingleBar } = {};
	// The runner processes do the work; this command only watches, so an operator who stops watching
	// is told the job goes on. Listening before the id line is written and before the first read: a
	// Ctrl-C right after the id appears gets the same answer.
	const interrupted = () => {
		progress.bar?.stop();
		process.stderr.write(
			`\nconvo-runner: stopped following ${id}; it goes on in the runner processes. Follow it again ` +
				`with: ${view.followAgain}\n`,
		);
		process.exit(INTERRUPTED_EXIT);
	};
	process.once('SIGINT', interrupted);
	// Written after the listener: a loaded machine can pause this process between a write and the next
	// statement for longer than the reader takes to answer the line.
	if (options.heading) process.stderr.write(options.heading);
	let status: S;
	try {
		status = await fetch();
	} catch (error) {
		process.removeListener('SIGINT', interrupted);
		throw error;
	}
	const payload = () => ({
		counts: view.counts(status),
		rate: status.rate.toFixed(1),
		etaText: eta(status.eta_seconds),
		state: status.state,
	});
	const bar = tty
		? new SingleBar({
				stream: process.stderr,
				format: ' {bar} {percentage}% | {counts} | {rate}/s | ETA {etaText} | {state}',
				hideCursor: true,
			})
		: undefined;
	bar?.start(view.total(status), view.done(status), payload());
	progress.bar = bar;
	// On a terminal the line goes above the bar, which is drawn again on its next update.
	const checkPresence = presenceWatch(context, view.kind, (line) =>
		process.stderr.write(bar ? `\r\x1b[2K${line}\n` : `${line}\n`),
	);
	try {
		let lastLine = 0;
		while (!view.settled(status)) {
			await checkPresence();
			await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 500));
			status = await fetch();
			if (bar) {
				bar.setTotal(view.total(status));
				bar.update(view.done(status), payload());
			} else if (Date.now() - lastLine > 2000) {
				const p = payload();
				process.stderr.write(
					`${id}: ${view.done(status)}/${view.total(status)} | ${p.counts} | ${p.rate}/s | ` +
						`ETA ${p.etaText} | ${p.state}\n`,
				);
				lastLine = Date.now();
			}
		}
	} finally {
		process.removeListener('SIGINT', interrupted);
	}
	bar?.update(view.done(status), payload());
	bar?.stop();
	return status;
}

const CAMPAIGN_SETTLED = new Set(['completed', 'paused']);
/**
 * An ended campaign takes its new state first and moves its pending recipients (to not sent or
 * cancelled) in the next step (campaigns/control.ts finishPending): followed until they have moved,
 * so the last line shows the final counts. A send still in flight is not waited for.
 */
const CAMPAIGN_ENDED = new Set(['cancelled', 'failed']);
const recipients = (status: CampaignStatus) => Object.values(status.counts).reduce((sum, n) => sum + n, 0);

export function follow(context: RunnerContext, id: string, options: FollowOptions = {}): Promise<CampaignStatus> {
	return followUntilSettled(
		context,
		id,
		() => campaignStatus(context, id),
		{
			kind: 'campaign',
			settled: (status) =>
				CAMPAIGN_SETTLED.has(status.state) || (CAMPAIGN_ENDED.has(status.state) && status.counts.pending === 0),
			// Sent of what may be sent (rejected rows never are): a campaign that ends failed or
			// cancelled shows its real share, not a full bar.
			total: (status) => Math.max(1, recipients(status) - status.counts.rejected),
			done: (status) => status.counts.sent,
			counts: ({ counts: c }) =>
				`sent ${c.sent} failed ${c.failed} unknown ${c.unknown} not sent ${c.not_sent} capped ${c.capped} ` +
				`suppressed ${c.suppressed} cancelled ${c.cancelled} expired ${c.expired} ` +
				`pending ${c.pending + c.claimed}`,
			followAgain: `convo-runner campaign status ${id} --wait`,
		},
		options,
	);
}

/** A reindex run's progress is the share of its source read (in bytes; rows are not known ahead). */
export function followReindex(
	context: RunnerContext,
	id: string,
	options: FollowOptions = {},
): Promise<ReindexOverview> {
	return followUntilSettled(
		context,
		id,
		() => reindexOverview(context, id),
		{
			kind: 'reindex run',
			settled: (status) => SETTLED_REINDEX_STATES.includes(status.state),
			total: (status) => status.source_bytes.total ?? Math.max(1, status.source_bytes.read),
			done: (status) =>
				SETTLED_REINDEX_STATES.includes(status.state)
					? (status.source_bytes.total ?? status.source_bytes.read)
					: status.source_bytes.read,
			counts: ({ counts: c }) =>
				`read ${c.read} unchanged ${c.unchanged} created ${c.created} updated ${c.updated} ` +
				`deactivated ${c.deactivated} rejected ${c.rejected} failed ${c.failed}`,
			followAgain: `convo-runner reindex status ${id} --wait`,
		},
		options,
	);
}
