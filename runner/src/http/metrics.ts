/**
 * GET /metrics in Prometheus text: BullMQ's own exporter for every queue, plus the runner's figures
 * read from Redis at scrape time (so every process's work counts, not just this one's):
 * recipients by outcome, 429 holds, retries, current rate and ETA, the delivery funnel (delivered,
 * read, replied, failed by reason), per campaign and sender number; the daily messaging limit
 * (limit, used, left) and the campaigns waiting for it; each reported campaign's state, and why a
 * paused one paused; items by outcome and rate per reindex run and collection; the runner processes
 * alive by role (their heartbeats).
 */
import { Counter, Gauge, Registry } from 'prom-client';

import type { RunnerContext } from '../context';
import { showBudget } from '../core/audience';
import { campaignFigures } from '../core/campaigns';
import { listReindexRuns } from '../core/reindex';
import { liveRunners, runnerQueues } from '../core/runners';

/** Campaigns a scrape reports: every running one and the most recent others. */
const RECENT = 100;

export class RunnerMetrics {
	private readonly registry = new Registry();

	private readonly running = new Gauge({
		name: 'convo_runner_campaigns_running',
		help: 'Campaigns running now',
		registers: [this.registry],
	});
	private readonly processes = new Gauge({
		name: 'convo_runner_processes',
		help: 'Runner processes alive on this Redis and prefix (their heartbeats), by role: start or worker',
		labelNames: ['role'],
		registers: [this.registry],
	});
	private readonly state = new Gauge({
		name: 'convo_runner_campaign_state',
		help: "1 for a campaign's state now (running campaigns and the 100 most recent others)",
		labelNames: ['campaign', 'number', 'state'],
		registers: [this.registry],
	});
	private readonly paused = new Gauge({
		name: 'convo_runner_campaign_paused',
		help: '1 while a campaign is paused, by why: operator, failures, template_refused, number_refused, unauthorized',
		labelNames: ['campaign', 'number', 'reason'],
		registers: [this.registry],
	});
	private readonly recipients = new Gauge({
		name: 'convo_runner_campaign_recipients',
		help: 'Recipients of a campaign by outcome',
		labelNames: ['campaign', 'number', 'outcome'],
		registers: [this.registry],
	});
	private readonly holds = new Counter({
		name: 'convo_runner_campaign_rate_limit_holds_total',
		help: '429 answers that held the sending number',
		labelNames: ['campaign', 'number'],
		registers: [this.registry],
	});
	private readonly retries = new Counter({
		name: 'convo_runner_campaign_retries_total',
		help: 'Sends retried after a 5xx or a refused connection',
		labelNames: ['campaign', 'number'],
		registers: [this.registry],
	});
	private readonly rate = new Gauge({
		name: 'convo_runner_campaign_rate',
		help: 'Sends per second over the last 10 seconds',
		labelNames: ['campaign', 'number'],
		registers: [this.registry],
	});
	private readonly eta = new Gauge({
		name: 'convo_runner_campaign_eta_seconds',
		help: 'Seconds until every recipient is final at the current rate',
		labelNames: ['campaign', 'number'],
		registers: [this.registry],
	});

	private readonly funnel = new Gauge({
		name: 'convo_runner_campaign_funnel',
		help:
			'Recipients of a campaign at each funnel stage: audience, accepted, sent, delivered, read, replied, ' +
			'failed_delivery, in_flight',
		labelNames: ['campaign', 'number', 'stage'],
		registers: [this.registry],
	});
	private readonly failedDelivery = new Gauge({
		name: 'convo_runner_campaign_failed_delivery',
		help: 'Sent messages of a campaign whose delivery failed, by reason (the 10 most frequent)',
		labelNames: ['campaign', 'number', 'reason'],
		registers: [this.registry],
	});

	private readonly dailyLimit = new Gauge({
		name: 'convo_runner_daily_limit',
		help: 'The business daily messaging limit: distinct customers per rolling 24 hours (0: unlimited)',
		registers: [this.registry],
	});
	private readonly dailyLimitUsed = new Gauge({
		name: 'convo_runner_daily_limit_used',
		help: 'Distinct customers messaged within the daily limit span (0 when unlimited: nothing is counted)',
		registers: [this.registry],
	});
	private readonly dailyLimitLeft = new Gauge({
		name: 'convo_runner_daily_limit_left',
		help: 'Customers that can still be counted under the daily messaging limit now (0 when unlimited)',
		registers: [this.registry],
	});
	private readonly waitingForLimit = new Gauge({
		name: 'convo_runner_campaigns_waiting_daily_limit',
		help: 'Running campaigns waiting for the daily messaging limit',
		registers: [this.registry],
	});

	private readonly reindexItems = new Gauge({
		name: 'convo_runner_reindex_items',
		help: 'Items of a reindex run by outcome',
		labelNames: ['run', 'collection', 'outcome'],
		registers: [this.registry],
	});
	private readonly reindexRate = new Gauge({
		name: 'convo_runner_reindex_rate',
		help: 'Source rows read per second over the last 10 seconds',
		labelNames: ['run', 'collection'],
		registers: [this.registry],
	});

	constructor(private readonly context: RunnerContext) {}

	/** Reads every runner figure from Redis (the state all processes share) into the registry. */
	private async refresh(): Promise<void> {
		this.registry.resetMetrics();
		const { running, campaigns } = await campaignFigures(this.context, RECENT);
		this.running.set(running);
		const roles = { start: 0, worker: 0 };
		for (const runner of await liveRunners(this.context)) roles[runner.role]++;
		for (const [role, count] of Object.entries(roles)) this.processes.set({ role }, count);
		const budget = await showBudget(this.context);
		if (budget.limit !== 'unlimited') {
			this.dailyLimit.set(budget.limit);
			this.dailyLimitUsed.set(budget.used);
			this.dailyLimitLeft.set(budget.left ?? 0);
		}
		this.waitingForLimit.set(campaigns.filter(({ status }) => status.waiting !== null).length);
		for (const { status, from, holds, retries } of campaigns) {
			const base = { campaign: status.id, number: from };
			this.state.set({ ...base, state: status.state }, 1);
			if (status.state === 'paused') this.paused.set({ ...base, reason: status.paused_reason ?? 'unknown' }, 1);
			for (const [outcome, count] of Object.entries(status.counts)) this.recipients.set({ ...base, outcome }, count);
			this.holds.inc(base, holds);
			this.retries.inc(base, retries);
			this.rate.set(base, status.rate);
			if (status.eta_seconds !== null) this.eta.set(base, status.eta_seconds);
			const funnel = status.funnel;
			if (funnel) {
				for (const stage of [
					'audience',
					'accepted',
					'sent',
					'delivered',
					'read',
					'replied',
					'failed_delivery',
					'in_flight',
				] as const)
					this.funnel.set({ ...base, stage }, funnel[stage]);
				for (const { reason, count } of funnel.failed_reasons.slice(0, 10))
					this.failedDelivery.set({ ...base, reason }, count);
			}
		}
		for (const run of await listReindexRuns(this.context, RECENT)) {
			const base = { run: run.id, collection: run.collection };
			for (const [outcome, count] of Object.entries(run.counts)) this.reindexItems.set({ ...base, outcome }, count);
			this.reindexRate.set(base, run.rate);
		}
	}

	async text(): Promise<string> {
		const queues = await runnerQueues(this.context);
		const queueText = await Promise.all(queues.map((queue) => queue.exportPrometheusMetrics()));
		await this.refresh();
		return `${await this.registry.metrics()}\n${oneFamilyText(queueText)}\n`;
	}

	get contentType(): string {
		return this.registry.contentType;
	}
}

/**
 * BullMQ's families renamed on the way out: `_count` is the suffix Prometheus keeps for the sample
 * count of a histogram or summary (promtool refuses it on a gauge).
 */
const RENAMED_FAMILIES: Readonly<Record<string, string>> = { bullmq_job_count: 'bullmq_jobs' };

/**
 * BullMQ exports each queue on its own, each with the family's HELP and TYPE lines and a space
 * after each label comma. One exposition may state a family once: keep the first HELP/TYPE, and
 * write labels the strict way (`{a="1",b="2"}`).
 */
function oneFamilyText(texts: string[]): string {
	const seen = new Set<string>();
	const samples = new Map<string, string[]>();
	const order: string[] = [];
	for (const exported of texts.flatMap((text) => text.split('\n'))) {
		if (exported.trim() === '') continue;
		const named = exported.startsWith('#') ? exported.split(' ')[2] : exported.split(/[{ ]/)[0];
		const family = RENAMED_FAMILIES[named] ?? named;
		const line = family === named ? exported : exported.replace(named, family);
		if (!samples.has(family)) {
			samples.set(family, []);
			order.push(family);
		}
		if (line.startsWith('#')) {
			if (!seen.has(line)) (samples.get(family) as string[]).unshift(line);
			seen.add(line);
		} else {
			(samples.get(family) as string[]).push(line.replace(/",\s+/g, '",'));
		}
	}
	return order.flatMap((family) => samples.get(family) as string[]).join('\n');
}
