/**
 * The runner's BullMQ topology on one screen: every queue with its workers' settings (QUEUES), every
 * job kind with its queue, name, data, id and options (JOBS), and the producers that queue them
 * (below). The workers (queues.ts), each queue's dispatch by job name and bull-board's list are
 * built from here; no other file names a queue or a job or sets a job's options. The processors
 * (the table's right column) are wired in processors.ts, where a working process is composed.
 *
 *   queue          job           queued by (producer)                           worked by (processor)
 *   control        feed          upsertFeeder: a job scheduler, every second    feedOnce, dispatchEvents,
 *                                                                               dropExpiredDrafts
 *                  start         addStartJob: delayed, one per `--at` campaign  startScheduledCampaign
 *                                                                               (campaigns/control.ts)
 *                  cron          CAMPAIGN_CRON: a scheduler per schedule        fireSchedule (campaigns/schedule.ts)
 *   send-<number>  send          addSendJobs: the feeder, SEND_JOB_SIZE         createSendProcessor (sending/send.ts)
 *                                recipients each, a bounded depth per number
 *   reindex        run           addReindexRunJob: one per reindex run          processRun (reindex/run.ts)
 *                  scheduled     REINDEX_CRON: a scheduler per schedule         runScheduledReindex (reindex/create.ts)
 *   events         <event type>  addDeliveryJobs: one per event and webhook     createDeliveryProcessor
 *                                                                               (webhooks/deliver.ts)
 *   tracking       track         upsertTracker: a job scheduler, every second   trackOnce (tracking/tracking.ts)
 *
 * (Queues as bull-board shows them; in Redis each name carries
 * its group's hash tag: `control-{g}`, `send-{n<number>}`.)
 *
 * Every process (`start` or `worker`) works every queue, the events queue only if it can sign
 * (RUNNER_WEBHOOK_KEY or RUNNER_TOKEN), so whatever a killed process was doing is taken up by any
 * process still running; job ids and the ledger make repeats harmless. A job whose name no kind
 * has (one queued by a runner that had a kind this one lacks) fails at once, named, instead of
 * completing unseen.
 *
 * The modules that process jobs import their producers from here, so this registry imports none of
 * them: it would close an import cycle.
 */
import { UnrecoverableError, type Job, type JobsOptions, type Processor, type Queue } from 'bullmq';
import { backoffMs, RUNNER_EVENTS, RUNNER_TEST_EVENT, type Backoff, type RunnerEvent } from 'convo-contract';

import type { RunnerConfig } from './config';
import { GLOBAL_TAG, numberTag } from './keys';
import type { Logger } from './log';

// ---- Queues: each name is formed here and nowhere else ----------------------------------------

// Each name holds its group's hash tag (keys.ts), so on a Redis Cluster a number's send queue sits
// in the slot of its gate and campaigns, and the shared queues in the global group's.
const CONTROL_QUEUE = `control-${GLOBAL_TAG}`;
/** One queue per sending number: the channel's ceiling is per number, and numbers do not slow each other. */
const sendQueueName = (from: string) => `send-${numberTag(from)}`;
const REINDEX_QUEUE = `reindex-${GLOBAL_TAG}`;
const EVENTS_QUEUE = `events-${GLOBAL_TAG}`;
const TRACKING_QUEUE = `tracking-${GLOBAL_TAG}`;

/** A queue's name as an operator reads it (bull-board): without its tag, `send-<number>`, `control`. */
export function shownQueueName(name: string): string {
	return name.replace(`-${GLOBAL_TAG}`, '').replace(/\{n(\d+)\}$/, '$1');
}

/**
 * BullMQ's lock settings of a queue's workers: how soon a dead
 * process's job is seen stalled, how often it may run again.
 */
interface Locks {
	lockDuration: number;
	stalledInterval: number;
	maxStalledCount: number;
}

export interface QueueSpec {
	/** The queue's name; a function of the number for the per-number send queues. */
	name: string | ((from: string) => string);
	/** Jobs one process works at once. */
	concurrency: (config: RunnerConfig) => number;
	locks: (config: RunnerConfig) => Locks;
	/** A failed job is logged by the worker (the other queues' processors log their own attempts). */
	logFailures?: boolean;
}

/**
 * A stalled send is re-run once, and the ledger turns its claim into `unknown` instead of sending.
 * Locks default to half BullMQ's (RUNNER_JOB_LOCK): a send ends within its 10 s deadline, and a dead
 * process's jobs (whose ids keep those recipients from being fed again) come back within about
 * twice the lock (30 s), not 60.
 */
const sendLocks = (config: RunnerConfig): Locks => ({
	maxStalledCount: 1,
	lockDuration: config.RUNNER_JOB_LOCK,
	stalledInterval: config.RUNNER_JOB_LOCK,
});

export const QUEUES = {
	/**
	 * One job at a time; the sends' locks (each control job is safe to run again: the feeder's lock,
	 * a start's atomic transition, a firing's derived campaign id).
	 */
	control: { name: CONTROL_QUEUE, concurrency: () => 1, locks: sendLocks, logFailures: true },
	/** RUNNER_CONCURRENCY sends at once per process, under the number's global rate limit (limiterFor). */
	send: { name: sendQueueName, concurrency: (config) => config.RUNNER_CONCURRENCY, locks: sendLocks },
	/**
	 * Two runs at once per process (each reads its own source). A run's lock is renewed by its process
	 * while the run lives; a killed process's run is seen stalled within about one and a half
	 * RUNNER_REINDEX_JOB_LOCK (15 s) and resumed elsewhere, up to 10 times.
	 */
	reindex: {
		name: REINDEX_QUEUE,
		concurrency: () => 2,
		locks: (config) => ({
			lockDuration: config.RUNNER_REINDEX_JOB_LOCK,
			stalledInterval: config.RUNNER_REINDEX_JOB_LOCK / 2,
			maxStalledCount: 10,
		}),
		logFailures: true,
	},
	/**
	 * 50 deliveries at once per process: waiting on receivers costs sockets, not CPU, and a webhook
	 * holds at most one of them (webhooks/deliver.ts), so up to this many receivers that hang still
	 * leave the others theirs. A delivery ends within its 10 s deadline; a stalled one is simply
	 * delivered again (at least once).
	 */
	events: {
		name: EVENTS_QUEUE,
		concurrency: () => 50,
		locks: () => ({ lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 2 }),
	},
	/**
	 * Delivery tracking's tick, one at a time per process (a lock makes it one across processes): a
	 * queue of its own, so its checks never wait for sends nor take from the send queues' limits;
	 * its pace is its own clock (RUNNER_TRACKING_RATE, tracking/tracking.ts).
	 */
	tracking: { name: TRACKING_QUEUE, concurrency: () => 1, locks: sendLocks, logFailures: true },
} satisfies Record<string, QueueSpec>;

export type QueueKind = keyof typeof QUEUES;
/** The queues every process opens at once, one each; the send queues are opened per number as numbers appear. */
export type SharedQueue = Exclude<QueueKind, 'send'>;

/**
 * A send queue's global rate limit as BullMQ's limiter wants it: send jobs (SEND_JOB_SIZE sends each) at twice
 * the pace the rate needs, so jobs cut short (recipients already sent, a resume) still keep the
 * number busy, in slices of about 50 ms so they are not taken in a burst at each second's start;
 * and at least MIN_JOBS_PER_SECOND, so a slow number whose campaign stopped takes its other
 * campaign's next job within 200 ms: at 10/s, twice the pace admitted one job per 500 ms, and a
 * cancel left the number idle for 520 ms. The start gate (sending/spacing.ts)
 * holds the rate itself.
 */
const MIN_JOBS_PER_SECOND = 5;

export function limiterFor(ratePerSecond: number): { max: number; duration: number } {
	const jobsPerSecond = Math.max((2 * ratePerSecond) / SEND_JOB_SIZE, MIN_JOBS_PER_SECOND);
	const max = Math.max(1, Math.floor(jobsPerSecond / 20));
	return { max, duration: Math.round((1000 * max) / jobsPerSecond) };
}

// ---- Backoffs: a job names its own, every worker computes it with the one formula -------------

const JOB_BACKOFFS = {
	/**
	 * Sends: RUNNER_SEND_BACKOFF (1 s), then twice as long after each next failure (2 s, 4 s ...),
	 * each up to half shorter at random, so failures of a burst do not come back as one.
	 */
	send: (config) => ({ firstMs: config.RUNNER_SEND_BACKOFF, jitter: 0.5 }),
	/** Deliveries: 1 s, 2 s, 4 s ... */
	delivery: () => ({ firstMs: 1000 }),
	/** A start job waiting for its campaign's commit: 2 s, 4 s, 8 s ... */
	commitWait: () => ({ firstMs: 2000 }),
} satisfies Record<string, (config: RunnerConfig) => Backoff>;

type JobBackoffName = keyof typeof JOB_BACKOFFS;

/** The wait before a send job sends a recipient again after its `tries`-th retry: the send backoff, per recipient. */
export const sendRetryDelay = (config: RunnerConfig, tries: number) => backoffMs(JOB_BACKOFFS.send(config), tries);

const jobBackoff = (name: JobBackoffName): { type: JobBackoffName } => ({ type: name });

/** Every worker's `backoffStrategy`: the wait of the backoff a job names (the contract's backoffMs, as the node's). */
export function jobBackoffStrategy(config: RunnerConfig): (attemptsMade: number, type?: string) => number {
	return (attemptsMade, type) => {
		if (!type || !(type in JOB_BACKOFFS)) throw new Error(`no backoff named ${String(type)}`);
		return backoffMs(JOB_BACKOFFS[type as JobBackoffName](config), attemptsMade);
	};
}

// ---- Job kinds ---------------------------------------------------------------------------------

interface ScheduleJobData {
	schedule: string;
}
interface StartJobData {
	campaign: string;
	dueAt: number;
}
/**
 * A send job: the campaign's recipients [index, index + count), sent one after another (sending/send.ts).
 * Send jobs are fixed blocks of SEND_JOB_SIZE indexes, so a recipient is always in the job of the same id.
 */
export interface SendJobData {
	campaign: string;
	index: number;
	/** Absent in a job queued by a runner from before jobs of several recipients: one recipient. */
	count?: number;
	/** Retries each recipient of the job had (index -> count), as a job's attempts were when it held one recipient. */
	tries?: Record<string, number>;
	/**
	 * A windowed campaign's send job (audience/windows.ts): its recipients by index (one zone's, not a
	 * block) and the zone's opening [opened, closes) in ms on the campaign's clock; the claim
	 * refuses outside it, and the recipients wait for the next opening. `feed` names the place in
	 * the zone's list it was fed from (the job's id).
	 */
	window?: { indexes: number[]; opening: [number, number]; feed: string };
}

/**
 * Recipients per send job. BullMQ's own work per job (fetch, lock, complete, remove: about 40 Redis
 * commands, some 130 µs of Redis's time) was most of a send's cost when a job was one recipient; a
 * job of 50 pays it once for fifty, and its first start's wait for a place on the number's clock
 * too (docs/decisions/sending/send-jobs-of-fifty-recipients.md). A send job stops between
 * recipients on a pause, a cancel or a stop, so it holds nothing longer than one send.
 */
export const SEND_JOB_SIZE = 50;
interface RunJobData {
	run: string;
}
/** A delivery carries the event and the webhook id, never a secret or a URL. */
export interface DeliveryJobData {
	event: RunnerEvent;
	webhook: string;
}

/** What works one kind of job in a process (processors.ts). */
type Handler<Data> = (job: Job<Data>, token?: string) => Promise<unknown>;

interface JobKind<Data> {
	queue: QueueKind;
	/** BullMQ's job name, what the queue's worker dispatches on. */
	name: string | readonly string[];
	/** How the job's id is formed: a job whose id is taken is not added again. */
	id?: (data: Data) => string;
	/** How its job scheduler's id is formed (BullMQ ids each job from it and the due time). */
	schedulerId?: (schedule: string) => string;
	options: (config: RunnerConfig) => JobsOptions;
}

/** Jobs a scheduler queues: none kept when done, the last 50 failures kept to look at. */
const scheduledJob = (): JobsOptions => ({ removeOnComplete: true, removeOnFail: 50 });

/**
 * A start job is queued before the campaign it starts is committed (`afterCommit`): it runs no
 * sooner than this grace, so a start time already past does not find the campaign not yet there.
 */
const COMMIT_GRACE_MS = 2_000;
/**
 * A commit can come later than the grace (a stalled process, a slow Redis) for as long as the
 * staged rows live (15 min): a start job that finds no campaign looks again, 2 s doubling over 10
 * tries (about 17 min in all), so a late commit is still started and a create that died is given up.
 */
const COMMIT_WAIT: JobsOptions = { attempts: 10, backoff: jobBackoff('commitWait') };

/** How often the feeder's and delivery tracking's ticks come (their job schedulers, below). */
export const FEED_EVERY_MS = 1000;
export const TRACK_EVERY_MS = 1000;

/** Every send job of a campaign has an id that starts so; the index follows. */
export const sendJobIdPrefix = (campaign: string) => `${campaign}-`;

const JOBS = {
	/** The tick: tops up the send queues, hands the outbox's events to deliveries, drops expired drafts. */
	feed: {
		queue: 'control',
		name: 'feed',
		// One scheduler in Redis however many processes upsert it.
		schedulerId: () => 'feeder',
		options: scheduledJob,
	} satisfies JobKind<Record<string, never>>,
	/**
	 * Delivery tracking's tick: walks the ledgers of campaigns being
	 * tracked and makes the checks due (tracking/tracking.ts).
	 */
	track: {
		queue: 'tracking',
		name: 'track',
		schedulerId: () => 'tracker',
		options: scheduledJob,
	} satisfies JobKind<Record<string, never>>,
	/**
	 * Starts a scheduled (`--at`) campaign at its time; one per campaign. It may wait for its
	 * campaign's commit while attempts remain.
	 */
	start: {
		queue: 'control',
		name: 'start',
		id: ({ campaign }) => `start-${campaign}`,
		options: () => ({ removeOnComplete: true, removeOnFail: 50 }),
	} satisfies JobKind<StartJobData>,
	/** A campaign schedule's firing, due at the scheduler's time: a campaign of its own. */
	cron: {
		queue: 'control',
		name: 'cron',
		schedulerId: (schedule) => `cron-${schedule}`,
		options: scheduledJob,
	} satisfies JobKind<ScheduleJobData>,
	/**
	 * Up to SEND_JOB_SIZE recipients of one campaign, its id the job's first index. The ledger is
	 * the record of what happened, so no finished job is kept (a kept one would block its id). A
	 * recipient's retry delays the job (send.ts) instead of failing it: its attempts here are for the
	 * job's own errors (Redis), and each recipient counts its retries in the data.
	 */
	send: {
		queue: 'send',
		name: 'send',
		id: ({ campaign, index, window }) => `${sendJobIdPrefix(campaign)}${window ? window.feed : index}`,
		options: (config) => ({
			attempts: config.RUNNER_SEND_ATTEMPTS,
			backoff: jobBackoff('send'),
			removeOnComplete: true,
			removeOnFail: true,
		}),
	} satisfies JobKind<SendJobData>,
	/**
	 * A reindex run; the process that takes it paces the run's
	 * upserts itself (the collection lease makes it the only one).
	 */
	run: {
		queue: 'reindex',
		name: 'run',
		id: ({ run }) => `run-${run}`,
		options: () => ({ removeOnComplete: true, removeOnFail: 100 }),
	} satisfies JobKind<RunJobData>,
	/** A reindex schedule's firing: a reindex run of its own, whose id is derived from the job's. */
	reindexCron: {
		queue: 'reindex',
		name: 'scheduled',
		schedulerId: (schedule) => `reindex-${schedule}`,
		options: scheduledJob,
	} satisfies JobKind<ScheduleJobData>,
	/**
	 * One event for one webhook, named by its event type. Finished jobs are kept an hour, so an event
	 * handed over again by a dispatcher that died half-way still finds its id taken; failed ones a week, to look at.
	 * A test event (addTestDelivery) is one of them, tried once.
	 */
	delivery: {
		queue: 'events',
		name: [...RUNNER_EVENTS, RUNNER_TEST_EVENT],
		id: ({ event, webhook }) => `${event.id}-${webhook}`,
		options: (config) => ({
			attempts: config.RUNNER_WEBHOOK_ATTEMPTS,
			backoff: jobBackoff('delivery'),
			removeOnComplete: { age: 3600, count: 10_000 },
			removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
		}),
	} satisfies JobKind<DeliveryJobData>,
} satisfies { [K in keyof JobDataByKind]: JobKind<JobDataByKind[K]> };

/** Every kind's data, which its processor (processors.ts) takes. */
interface JobDataByKind {
	feed: Record<string, never>;
	track: Record<string, never>;
	start: StartJobData;
	cron: ScheduleJobData;
	send: SendJobData;
	run: RunJobData;
	reindexCron: ScheduleJobData;
	delivery: DeliveryJobData;
}
type JobKindName = keyof typeof JOBS;
/** The processors one process works, by kind; a kind left out is not worked by the process. */
export type Handlers = { [K in JobKindName]?: Handler<JobDataByKind[K]> };

/**
 * The processor of one queue in this process: a job goes to the processor of the kind its name
 * names; a name no kind has fails at once (no retry), saying so. Undefined when the process works
 * no kind of the queue (the events queue without a signing key).
 */
export function queueProcessor(queue: QueueKind, handlers: Handlers, log: Logger): Processor | undefined {
	const byName = new Map<string, (job: Job, token?: string) => Promise<unknown>>();
	for (const kind of Object.keys(JOBS) as JobKindName[]) {
		const { queue: kindQueue, name } = JOBS[kind];
		const handler = handlers[kind] as ((job: Job, token?: string) => Promise<unknown>) | undefined;
		if (kindQueue !== queue || !handler) continue;
		for (const each of typeof name === 'string' ? [name] : name) byName.set(each, handler);
	}
	if (byName.size === 0) return undefined;
	return async (job: Job, token?: string) => {
		const handler = byName.get(job.name);
		if (!handler) {
			log.warn({ queue, job: job.name, id: job.id }, 'job refused: no kind of this name');
			throw new UnrecoverableError(`no processor for a "${job.name}" job on the ${queue} queue`);
		}
		return handler(job, token);
	};
}

// ---- Producers ---------------------------------------------------------------------------------

/**
 * What a producer uses of a RunnerContext: its settings and the queues it adds to. Named here, not
 * imported: the context holds the queues, which are opened from this registry.
 */
interface Producing {
	config: RunnerConfig;
	queues: { shared(kind: SharedQueue): Queue; send(from: string): Queue };
}

/** The feeder tick's scheduler; every process upserts it at start. */
export async function upsertFeeder(context: Producing): Promise<void> {
	const { queue, name, schedulerId, options } = JOBS.feed;
	await context.queues
		.shared(queue)
		.upsertJobScheduler(schedulerId(), { every: FEED_EVERY_MS }, { name, opts: options() });
}

/** Delivery tracking's tick scheduler; every process upserts it at start. */
export async function upsertTracker(context: Producing): Promise<void> {
	const { queue, name, schedulerId, options } = JOBS.track;
	await context.queues
		.shared(queue)
		.upsertJobScheduler(schedulerId(), { every: TRACK_EVERY_MS }, { name, opts: options() });
}

/**
 * The delayed job that starts a scheduled campaign at `dueAt`; `afterCommit`: queued before the campaign is committed.
 */
export async function addStartJob(context: Producing, data: StartJobData, { afterCommit = false } = {}): Promise<void> {
	const { queue, name, id, options } = JOBS.start;
	const delay = Math.max(afterCommit ? COMMIT_GRACE_MS : 0, data.dueAt - Date.now());
	await context.queues
		.shared(queue)
		.add(name, data, { ...options(), jobId: id(data), delay, ...(afterCommit ? COMMIT_WAIT : {}) });
}

/** Sends of one number's campaigns, in one atomic addBulk (ids dedupe the ones still queued). */
export async function addSendJobs(context: Producing, from: string, sends: SendJobData[]): Promise<void> {
	const { name, id, options } = JOBS.send;
	const opts = options(context.config);
	if (sends.length > 0)
		await context.queues.send(from).addBulk(sends.map((data) => ({ name, data, opts: { ...opts, jobId: id(data) } })));
}

export async function addReindexRunJob(context: Producing, data: RunJobData): Promise<void> {
	const { queue, name, id, options } = JOBS.run;
	await context.queues.shared(queue).add(name, data, { ...options(), jobId: id(data) });
}

/** The id of an event's delivery to one webhook (the convo-runner-delivery header). */
export const deliveryJobId = (data: DeliveryJobData) => JOBS.delivery.id(data);

/** Deliveries, one per event and webhook, in one atomic addBulk. */
export async function addDeliveryJobs(context: Producing, deliveries: DeliveryJobData[]): Promise<void> {
	const { queue, id, options } = JOBS.delivery;
	const opts = options(context.config);
	if (deliveries.length > 0)
		await context.queues
			.shared(queue)
			.addBulk(deliveries.map((data) => ({ name: data.event.type, data, opts: { ...opts, jobId: id(data) } })));
}

/**
 * A test event for one webhook: tried once (the operator sees the answer and sends another), and at
 * most one queued or in flight per webhook, so pressing the button again adds nothing. Answers the
 * delivery's job id (the one already queued when there is one) and whether this call queued it.
 */
export async function addTestDelivery(
	context: Producing,
	data: DeliveryJobData,
): Promise<{ deliveryId: string; queued: boolean }> {
	const { queue, id, options } = JOBS.delivery;
	const job = await context.queues.shared(queue).add(data.event.type, data, {
		...options(context.config),
		attempts: 1,
		jobId: id(data),
		deduplication: { id: `test-${data.webhook}` },
	});
	return { deliveryId: String(job.id), queued: job.id === id(data) };
}

/**
 * The job scheduler of a kind of cron schedule: upserted with the schedule (BullMQ checks its
 * pattern and zone), removed with it.
 */
export interface CronJobs {
	upsert(context: Producing, schedule: string, repeat: { pattern: string; tz: string }): Promise<void>;
	remove(context: Producing, schedule: string): Promise<void>;
}

function cronJobs({ queue, name, schedulerId, options }: typeof JOBS.cron | typeof JOBS.reindexCron): CronJobs {
	return {
		upsert: async (context, schedule, repeat) => {
			const data: ScheduleJobData = { schedule };
			await context.queues
				.shared(queue)
				.upsertJobScheduler(schedulerId(schedule), repeat, { name, data, opts: options() });
		},
		remove: async (context, schedule) => {
			await context.queues.shared(queue).removeJobScheduler(schedulerId(schedule));
		},
	};
}

export const CAMPAIGN_CRON = cronJobs(JOBS.cron);
export const REINDEX_CRON = cronJobs(JOBS.reindexCron);
