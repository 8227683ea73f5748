/**
 * What works each kind of job (jobs.ts) in a process that takes jobs: the wiring of the registry's
 * kinds to the domains' processors, done where a working process is composed (runtime.ts) so that
 * the registry, which the domains queue their jobs through, imports none of them.
 */
import type { Processor } from 'bullmq';

import type { RunnerContext } from './context';
import { QUEUES, queueProcessor, type Handlers, type QueueKind } from './jobs';
import { startScheduledCampaign } from './campaigns/control';
import { dropExpiredDrafts } from './campaigns/draft';
import { feedOnce } from './sending/feeder';
import { fireSchedule } from './campaigns/schedule';
import { trackOnce } from './tracking/tracking';
import { createSendProcessor, type InFlight } from './sending/send';
import { runScheduledReindex } from './reindex/create';
import { processRun } from './reindex/run';
import { createDeliveryProcessor } from './webhooks/deliver';
import { dispatchEvents } from './webhooks/outbox';

/** What a process builds its processors with. */
export interface WorkingProcess {
	context: RunnerContext;
	/** Sends claimed and not settled: what a stop waits for. */
	inFlight: Map<string, InFlight>;
	/** Aborted when a stop's deadline passes. */
	shutdown: AbortSignal;
	/** Aborted when a stop begins: a send job sends no further recipient (the rest go back to the queue). */
	draining: AbortSignal;
	/** The key deliveries are signed with; without it the process works no deliveries. */
	webhookKey?: string;
}

/** The processor of each kind this process works; a kind it does not work is left out. */
function handlers({ context, inFlight, shutdown, draining, webhookKey }: WorkingProcess): Handlers {
	return {
		// The tick: tops up the send queues, hands the outbox's events to deliveries, drops expired drafts.
		feed: async () => {
			await feedOnce(context);
			await dispatchEvents(context);
			return dropExpiredDrafts(context);
		},
		// Only a process that talks to the service tracks, unless its
		// operator gave it the send role alone (RUNNER_TRACKING=off).
		track: context.service && context.config.RUNNER_TRACKING === 'on' ? () => trackOnce(context) : undefined,
		start: (job) =>
			startScheduledCampaign(
				context,
				job.data.campaign,
				job.data.dueAt,
				job.attemptsMade + 1 < (job.opts.attempts ?? 1),
			),
		cron: (job) => fireSchedule(context, job.data.schedule, job.timestamp + (job.opts.delay ?? 0)),
		send: createSendProcessor(context, inFlight, shutdown, draining),
		run: (job) => processRun(context, job.data.run),
		reindexCron: (job) => runScheduledReindex(context, job.data.schedule, String(job.id)),
		delivery: webhookKey ? createDeliveryProcessor(context, webhookKey) : undefined,
	};
}

/**
 * Each queue's processor in this process, built once per queue: the send queues of every number
 * share one processor (and its caches). A queue whose kinds the process does not work has none.
 */
export function queueProcessors(process: WorkingProcess): Partial<Record<QueueKind, Processor>> {
	const byKind = handlers(process);
	const processors: Partial<Record<QueueKind, Processor>> = {};
	for (const queue of Object.keys(QUEUES) as QueueKind[]) {
		const processor = queueProcessor(queue, byKind, process.context.log);
		if (processor) processors[queue] = processor;
	}
	return processors;
}
