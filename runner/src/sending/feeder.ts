/**
 * The feeder: every second, for each running campaign, it tops up the number's send queue to a
 * bounded depth of jobs, walking the ledger with a cursor. Redis therefore holds a few thousand
 * send jobs per number however large the campaign. It is also the watchdog: a campaign that made
 * no progress for RUNNER_FEEDER_STALL with recipients still open has its dead claims turned `unknown` and its
 * pending recipients fed again (lost jobs are re-added; ids dedupe live ones, the ledger the rest),
 * and it repairs the numbers' copies of the suppression list (audience/suppression.ts).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import type { RunnerContext } from '../context';
import { addSendJobs, SEND_JOB_SIZE, sendJobIdPrefix, type SendJobData } from '../jobs';
import { expireAtEnd, expireDeadClaims, finishPending } from '../campaigns/control';
import { openingAt, type WeekWindow } from '../audience/windows';
import { findCampaign, type CampaignRecord } from '../campaigns/store';
import { restartSpacing, setSpacingRate } from './spacing';
import { campaignNumber, listUnlisted } from '../keyGroups';
import { keepLock, releaseLock, takeLock } from '../lock';
import { redisScript } from '../redisScripts';
import { repairCopies } from '../audience/suppression';
import { decideIfDue } from '../campaigns/abTest';

const FEED_CHUNK = 1000;
/**
 * Jobs added to a queue in one call. A chunk goes in slices so the first sends can start while the
 * rest are added: one addBulk of 700 jobs took 120 to 440 ms on a loaded machine, and a hand-over
 * (handOverNumber) leaves its number idle until the first jobs are in.
 */
const ADD_SLICE = 100;

/** A number's queue depth, in send jobs waiting: about 20 s of work at its rate, within [200, 5000] recipients. */
const queueDepthFor = (rate: number) => Math.ceil(Math.min(5000, Math.max(200, rate * 20)) / SEND_JOB_SIZE);

/** One pass of the feeder; false when another pass (any process) held the lock, so this one did nothing. */
export async function feedOnce(context: RunnerContext): Promise<boolean> {
	const { redis, keys } = context;
	const token = randomBytes(8).toString('hex');
	const leaseMs = context.config.RUNNER_FEEDER_LOCK;
	if ((await takeLock(redis, keys.feederLock, token, leaseMs)) !== undefined) return false;
	// Renewed while the pass runs: a process killed mid-pass stops the feeding for one lease at most.
	const stopRenewing = keepLock(redis, keys.feederLock, token, leaseMs, {
		error: (error) => context.log.warn({ err: error.message }, 'could not renew the feeder lock'),
	});
	try {
		const numberState = redisScript(redis, 'numberState');
		const campaigns: CampaignRecord[] = [];
		const numbers = await redis.smembers(keys.numbers);
		// Copies of the suppression list: a number's goes once its campaigns have finished; one a crash
		// left behind its version is brought up to it.
		await repairCopies(context);
		// Each number keeps its own sets (keys.ts): one call per number.
		for (const from of numbers) {
			const [finishing, running, unlisted] = (await numberState(
				[keys.finishing(from), keys.running(from), keys.unlisted(from)],
				[],
			)) as [string[], string[], number];
			// Creates whose process died between the commit and the listing (keyGroups.ts).
			if (unlisted > 0) await listUnlisted(context, from);
			// Ends a process did not finish (killed between the state change and the last pending recipient).
			for (const id of finishing) await finishPending(context, id);
			for (const id of running) {
				const campaign = await findCampaign(context, id);
				if (campaign?.state === 'running') campaigns.push(campaign);
				else await redis.srem(keys.running(from), id);
			}
		}
		campaigns.sort((a, b) => a.createdAt - b.createdAt);

		// Campaigns on one number share its limit: the strictest rate among them holds.
		const rates = new Map<string, number>();
		for (const campaign of campaigns)
			rates.set(campaign.from, Math.min(rates.get(campaign.from) ?? Infinity, campaign.rate));
		const room = new Map<string, number>();
		for (const [from, rate] of rates) {
			await context.queues.applyRate(from, rate);
			await setSpacingRate(context, from, rate);
			const queue = context.queues.send(from);
			const counts = await queue.getJobCounts('waiting', 'delayed', 'prioritized');
			// Jobs being worked count only if their campaign still runs: a stopped campaign's jobs stay
			// active at the start gate until their place comes (up to a couple of seconds at low rates),
			// and counted they would keep a hand-over (handOverNumber) from queueing the others' jobs.
			const running = campaigns
				.filter((campaign) => campaign.from === from)
				.map((campaign) => sendJobIdPrefix(campaign.id));
			const active = (await queue.getRanges(['active'], 0, -1)).filter((id) =>
				running.some((prefix) => id.startsWith(prefix)),
			).length;
			const queued = Object.values(counts).reduce((sum, n) => sum + n, 0) + active;
			room.set(from, queueDepthFor(rate) - queued);
		}

		for (const campaign of campaigns) {
			if (campaign.counts.pending + campaign.counts.claimed === 0) {
				await context.ledger.finishIfDone(campaign.id);
				continue;
			}
			if (campaign.endAt !== undefined && Date.now() + campaign.clockOffset >= campaign.endAt) {
				if (campaign.counts.pending > 0)
					context.log.info(
						{ campaign: campaign.id, expired: await expireAtEnd(context, campaign) },
						'campaign end passed: its unsent recipients expired',
					);
				continue;
			}
			// An A/B test decides here once due; until then its remainder stays pending, held by the claim.
			const test = campaign.abTest;
			const holding =
				test !== undefined &&
				(await decideIfDue(context, campaign, test).catch((error: Error) => {
					context.log.warn({ campaign: campaign.id, err: error.message }, 'A/B test decision failed; tried next tick');
					return test.phase;
				})) !== 'decided';
			let available = room.get(campaign.from) ?? 0;
			if (campaign.window) {
				// Its recipients waiting out the frequency cap stay pending: their zone's next opening
				// feeds them again, inside their window.
				const fed = await feedZones(
					context,
					campaign,
					campaign.window,
					Math.max(0, Math.min(available, FEED_CHUNK / SEND_JOB_SIZE)),
				);
				room.set(campaign.from, available - fed.jobs);
				if (
					fed.open &&
					campaign.budgetNextAt === undefined &&
					Date.now() - campaign.lastProgressAt > context.config.RUNNER_FEEDER_STALL
				)
					await sweep(context, campaign);
				continue;
			}
			// Recipients waiting out the frequency cap (audience/cap.ts) go first once due: they were fed before.
			const { queued, waiting } = await feedWaiting(context, campaign, Math.min(available, FEED_CHUNK / SEND_JOB_SIZE));
			available -= queued;
			room.set(campaign.from, available);
			if (campaign.cursor < campaign.total) {
				if (available <= 0) continue;
				room.set(
					campaign.from,
					available - (await feedChunk(context, campaign, Math.min(available, FEED_CHUNK / SEND_JOB_SIZE))),
				);
			} else if (
				queued === 0 &&
				// Waiting for the daily limit is not a stall: its jobs wait in the delayed set (sending/send.ts).
				campaign.budgetNextAt === undefined &&
				Date.now() - campaign.lastProgressAt > context.config.RUNNER_FEEDER_STALL &&
				campaign.counts.pending + campaign.counts.claimed > waiting &&
				// A test whose open recipients are all the held remainder is not stalled: its decision feeds them.
				!(holding && campaign.counts.pending + campaign.counts.claimed <= (test?.counts[0] ?? 0))
			) {
				// A campaign whose only open recipients wait out the cap is not stalled: the waiting set feeds them.
				await sweep(context, campaign);
			}
		}
	} finally {
		stopRenewing();
		await releaseLock(redis, keys.feederLock, token);
	}
	return true;
}

/**
 * The feeder's part for a campaign that waits out the cap: queues the send jobs of its waiting
 * recipients now due (at most `jobs` of them) and answers how many jobs it queued and how many
 * recipients still wait. A due recipient is taken out of the set before its job is queued: one
 * whose process dies in between is still pending, and the feeder's watchdog feeds it again (it no
 * longer counts among those that wait).
 */
async function feedWaiting(
	context: RunnerContext,
	campaign: { id: string; from: string; total: number },
	jobs: number,
): Promise<{ queued: number; waiting: number }> {
	const take = redisScript(context.redis, 'takeDue');
	const [due, waiting] = (await take(
		[context.keys.capWaiting(campaign.from, campaign.id), context.keys.campaign(campaign.from, campaign.id)],
		[Math.max(0, jobs) * SEND_JOB_SIZE],
	)) as [string[], number];
	const jobOf = (index: string) => Number(index) - (Number(index) % SEND_JOB_SIZE);
	// Their jobs, at most `jobs` of them (the number's queue depth); those of further jobs stay due, first in line.
	const starts = [...new Set(due.map(jobOf))].slice(0, jobs);
	const later = due.filter((index) => !starts.includes(jobOf(index)));
	const sends: SendJobData[] = starts.map((index) => ({
		campaign: campaign.id,
		index,
		count: Math.min(SEND_JOB_SIZE, campaign.total - index),
	}));
	if (sends.length > 0) await addSendJobs(context, campaign.from, sends);
	if (later.length > 0)
		await context.redis.zadd(
			context.keys.capWaiting(campaign.from, campaign.id),
			...later.flatMap((index) => [0, index]),
		);
	return { queued: sends.length, waiting: waiting + later.length };
}

/**
 * Adds a send job for each of the next `jobs` blocks of SEND_JOB_SIZE indexes (from the cursor)
 * that has a pending recipient; returns how many. A job covers its whole block: it
 * skips recipients no longer pending, and its id, the block's, keeps it from being queued twice.
 */
async function feedChunk(context: RunnerContext, campaign: CampaignRecord, jobs: number): Promise<number> {
	const first = campaign.cursor - (campaign.cursor % SEND_JOB_SIZE);
	const records = await context.ledger.read(campaign.id, first, Math.min(jobs * SEND_JOB_SIZE, campaign.total - first));
	const sends: SendJobData[] = [];
	for (let at = 0; at < records.length; at += SEND_JOB_SIZE) {
		const block = records.slice(at, at + SEND_JOB_SIZE);
		if (block.some((record) => record?.outcome === 'pending'))
			sends.push({ campaign: campaign.id, index: first + at, count: block.length });
	}
	for (let i = 0; i < sends.length; i += ADD_SLICE / SEND_JOB_SIZE)
		await addSendJobs(context, campaign.from, sends.slice(i, i + ADD_SLICE / SEND_JOB_SIZE));
	await context.redis.hset(context.keys.campaign(campaign.from, campaign.id), 'cursor', first + records.length);
	return sends.length;
}

/**
 * A windowed campaign's feed: for each of its zones whose window is open now (on the campaign's
 * clock), the next recipients of that zone's list (keys.zoneIndexes) from where this opening's
 * feed stands (keys.zoneFeed), as send jobs that carry their indexes and the opening; a zone closed
 * now costs nothing but its look at the clock, and nothing else of the audience is read. A new
 * opening starts its zone's list over: those sent are skipped, those a close left pending are fed
 * again. Returns the jobs added and whether any zone with recipients is open.
 */
async function feedZones(
	context: RunnerContext,
	campaign: CampaignRecord,
	week: WeekWindow,
	jobs: number,
): Promise<{ jobs: number; open: boolean }> {
	const { redis, keys } = context;
	const zones = campaign.zones ?? [];
	const now = Date.now() + campaign.clockOffset;
	const feedKey = keys.zoneFeed(campaign.from, campaign.id);
	const stands = zones.length > 0 ? await redis.hmget(feedKey, ...zones.map((_, zone) => String(zone))) : [];
	let added = 0;
	let anyOpen = false;
	for (const [zone, [key, , chunks]] of zones.entries()) {
		const opening = openingAt(week, key, now);
		if (!opening) continue;
		anyOpen = true;
		const [openedAt, chunkAt, offsetAt] = (stands[zone] ?? '').split(':').map(Number);
		let [chunk, offset] = openedAt === opening[0] ? [chunkAt, offsetAt] : [0, 0];
		const sends: SendJobData[] = [];
		while (added + sends.length < jobs && chunk < chunks) {
			const list =
				(await redis.hget(keys.zoneIndexes(campaign.from, campaign.id), `${zone}.${chunk}`))?.split(',').map(Number) ??
				[];
			const slice = list.slice(offset, offset + (jobs - added - sends.length) * SEND_JOB_SIZE);
			const records = await context.ledger.readAt(campaign.id, slice);
			const pending = slice.filter((_, i) => records[i]?.outcome === 'pending');
			for (let at = 0; at < pending.length; at += SEND_JOB_SIZE) {
				const indexes = pending.slice(at, at + SEND_JOB_SIZE);
				sends.push({
					campaign: campaign.id,
					index: indexes[0],
					window: { indexes, opening, feed: `z${zone}-${opening[0]}-${chunk}-${offset}-${at}` },
				});
			}
			offset += slice.length;
			if (offset >= list.length) [chunk, offset] = [chunk + 1, 0];
		}
		for (let i = 0; i < sends.length; i += ADD_SLICE / SEND_JOB_SIZE)
			await addSendJobs(context, campaign.from, sends.slice(i, i + ADD_SLICE / SEND_JOB_SIZE));
		await redis.hset(feedKey, String(zone), `${opening[0]}:${chunk}:${offset}`);
		added += sends.length;
	}
	return { jobs: added, open: anyOpen };
}

/** The watchdog: claims older than any live attempt can be become unknown; the ledger is walked again. */
async function sweep(context: RunnerContext, campaign: CampaignRecord): Promise<void> {
	const expired = await expireDeadClaims(context, campaign);
	await context.redis.hset(context.keys.campaign(campaign.from, campaign.id), {
		cursor: 0,
		last_progress_at: Date.now(),
	});
	// A windowed campaign's zones start their lists over too.
	if (campaign.window) await context.redis.del(context.keys.zoneFeed(campaign.from, campaign.id));
	context.log.warn(
		{ campaign: campaign.id, expiredClaims: expired },
		'campaign made no progress: dead claims marked unknown, pending recipients fed again',
	);
}

/**
 * Takes a campaign's jobs out of its number's queue once it stopped sending (paused, cancelled,
 * failed): left there, each would still pass BullMQ's limiter, one per slot of the number's rate,
 * before the start gate turned it away (spacing.ts), and the other campaigns on the number would
 * wait behind them for up to the queue's 20 s. Nothing is lost: their recipients are still pending
 * in the ledger (a resume feeds them again from the start, an end moves them), and a job being
 * worked is locked and stays. Should the campaign be running again by the time they are gone, its
 * cursor goes back to the start so the feeder adds them again. Returns how many were taken out.
 */
export async function dropQueuedSends(context: RunnerContext, from: string, campaign: string): Promise<number> {
	const queue = context.queues.send(from);
	const mine = sendJobIdPrefix(campaign);
	const ids = (await queue.getRanges(['wait', 'delayed', 'prioritized'], 0, -1)).filter((id) => id.startsWith(mine));
	const removed = (await Promise.all(ids.map((id) => queue.remove(id)))).filter((answer) => answer === 1).length;
	const hash = context.keys.campaign(from, campaign);
	if ((await context.redis.hget(hash, 'state')) === 'running') {
		await context.redis.hset(hash, 'cursor', 0);
		await context.redis.del(context.keys.zoneFeed(from, campaign));
	}
	return removed;
}

/** How long a hand-over waits for a feeder pass running elsewhere to finish before it feeds itself. */
const HAND_OVER_WAIT = { tries: 20, everyMs: 50 };

/**
 * An operator just stopped `campaign` (paused, cancelled): its number goes on with its other
 * campaigns now instead of after its dead jobs. Left to the send processor and the feeder tick,
 * the first dead job to reach the start gate takes the others out (dropQueuedSends), and only the
 * next tick, up to a second later, queues the other campaigns' jobs: 0.5 to 0.7 s without a send
 * from the number, more where its jobs waiting at the gate held the
 * number's next places (restartSpacing). Here all three happen before the stop answers. A pass
 * already running elsewhere (the lock taken) may have counted the dead jobs as queued, so this
 * waits for it to end and runs one of its own.
 */
export async function handOverNumber(context: RunnerContext, campaign: string): Promise<void> {
	const from = await campaignNumber(context, campaign);
	if (!from) return;
	await dropQueuedSends(context, from, campaign);
	await restartSpacing(context, from);
	for (let tries = 1; !(await feedOnce(context)) && tries < HAND_OVER_WAIT.tries; tries++)
		await sleep(HAND_OVER_WAIT.everyMs);
}
