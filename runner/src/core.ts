/**
 * The runner's core library: what every client (the CLI now; the HTTP API, the console and the
 * Convo node's Campaign resource later) calls to create, control and report campaigns. No rule is
 * written in a client.
 */
import { createHash, randomBytes } from 'node:crypto';

import { ConflictError, UserError, type RunnerContext } from './context';
import { IDEMPOTENCY_SECONDS } from './keys';
import { luaScript } from './redis';
import type { SourceRecord } from './source';
import { checkUrlAllowed } from './net/outbound';
import { SealError, storedSource } from './net/urls';
import { snapshotCampaign, type Snapshot } from './campaigns/create';
import { CLI_NAMES, campaignSettings, settingsError, type CampaignSettings, type SettingNames } from './campaigns/schema';
import { createSchedule, findSchedule, listSchedules, removeSchedule, scheduleView, type ScheduleRecord } from './campaigns/schedule';
import { campaignDetail, campaignStatus, getCampaign, listCampaigns, newCampaignId, statusOf } from './campaigns/store';
import { cancelCampaign, pauseCampaign, queueScheduledStart, resumeCampaign, retryNotSent, setCampaignRate } from './campaigns/control';
import { DRAFT_LIFETIME_MS, giveBackDraftPlace, startDraft, takeDraftPlace } from './campaigns/draft';

export { campaignStatus, listCampaigns, pauseCampaign, resumeCampaign, retryNotSent, setCampaignRate, listSchedules };
export { addRecipients, type ChunkAnswer } from './campaigns/draft';
export { reconcileCampaign } from './campaigns/reconcile';
export { errorBreakdown, reportRows, reportText } from './campaigns/report';
export { rateHistory, getCampaign } from './campaigns/store';

// Webhooks: registrations and the events delivered to them (webhooks/).
export { createWebhook, enableWebhook, getWebhook, listWebhooks, pageWebhooks, removeWebhook, type WebhookInput, type WebhookView } from './webhooks/store';

// Reindex runs: keep a search collection in sync with a feed (reindex/).
export { createReindex, DEFAULT_REINDEX_RATE, listReindexSchedules, removeReindexSchedule, type ReindexAnswer, type ReindexInput } from './reindex/create';
export { listRuns as listReindexRuns, runOverview as reindexOverview, runStatus as reindexStatus, statusOf as reindexStatusOf, type RunOverview as ReindexOverview, type RunStatus as ReindexStatus } from './reindex/store';
export { reindexReport } from './reindex/report';

export type CreateAnswer = (Snapshot & { kind: 'campaign' }) | { kind: 'schedule'; schedule: Omit<ScheduleRecord, 'sealedSource'> };

/** The settings of a create, checked; each error names the setting as the client calls it. */
function checkedSettings(context: RunnerContext, input: CampaignSettings, names: SettingNames) {
	const parsed = campaignSettings.safeParse(input);
	if (!parsed.success) throw new UserError(settingsError(parsed.error, names));
	const settings = parsed.data;
	if (settings.cron && settings.at) throw new UserError(`${names.at} and ${names.cron} exclude each other: ${names.at} runs once, ${names.cron} repeats`);
	if (settings.tz && !settings.cron) throw new UserError(`${names.tz} goes with ${names.cron}`);
	const rate = settings.rate ?? context.config.RUNNER_DEFAULT_RATE;
	const common = { templateId: settings.templateId, from: settings.from, agentId: settings.agentId, rate, source: settings.source, format: settings.format };
	return { settings, common };
}

/** `records`: rows already at hand (an upload, inline rows); `input.source` then only names them. */
/**
 * `claim`: the Idempotency-Key this create runs under (see once); its answer is kept in the same
 * step that makes the campaign visible.
 */
export async function createCampaign(context: RunnerContext, input: CampaignSettings, records?: AsyncIterable<SourceRecord>, names: SettingNames = CLI_NAMES, claim?: OnceClaim): Promise<CreateAnswer> {
	const { settings, common } = checkedSettings(context, input, names);

	if (settings.cron && records) throw new UserError('a cron schedule re-reads its recipients at each run: give a file path or a URL, not rows');
	if (!records) await checkUrlAllowed(context.config, common.source, names.source);
	if (settings.cron) {
		let stored;
		try {
			stored = storedSource(context.config, common.source, names.source);
		} catch (error) {
			throw error instanceof SealError ? new UserError(error.message) : error;
		}
		const schedule = await createSchedule(context, { ...common, source: stored.source, sealedSource: stored.sealed, cron: settings.cron, tz: settings.tz ?? 'UTC' });
		context.log.info({ schedule: schedule.id, cron: schedule.cron, tz: schedule.tz }, 'campaign schedule created');
		return { kind: 'schedule', schedule: scheduleView(schedule) };
	}

	const id = newCampaignId();
	const startAt = settings.at ? Date.parse(settings.at) : undefined;
	// The start job just before the commit: a create that dies before its commit leaves a job that
	// finds no campaign and does nothing; one that dies after it leaves a scheduled campaign with its job.
	const beforeCommit = startAt ? () => queueScheduledStart(context, id, startAt, { afterCommit: true }) : undefined;
	const snapshot = await snapshotCampaign(context, { ...common, id, state: startAt ? 'scheduled' : 'running', startAt, records, beforeCommit, claim: claim && { ...claim, answer: { kind: 'campaign' } } });
	context.log.info({ campaign: id, state: snapshot.state, recipients: snapshot.accepted, rejected: snapshot.rejected }, 'campaign created');
	return { kind: 'campaign', ...snapshot };
}

/**
 * A draft: a campaign created with the settings and the rows given so far (maybe none), filled
 * by addRecipients a chunk at a time and sent only once startCampaign is called. Never started,
 * it is removed after 24 h.
 */
export async function createDraft(context: RunnerContext, input: CampaignSettings, records?: AsyncIterable<SourceRecord>, names: SettingNames = CLI_NAMES, claim?: OnceClaim): Promise<Snapshot & { kind: 'campaign' }> {
	const { settings, common } = checkedSettings(context, input, names);
	if (settings.cron) throw new UserError(`${names.cron} does not go with a draft: a draft is one campaign, started once`);
	if (!records) await checkUrlAllowed(context.config, common.source, names.source);
	const id = newCampaignId();
	const startAt = settings.at ? Date.parse(settings.at) : undefined;
	const draft = { startsAs: startAt ? ('scheduled' as const) : ('running' as const), expiresAt: Date.now() + DRAFT_LIFETIME_MS };
	await takeDraftPlace(context, id, draft.expiresAt);
	let snapshot: Snapshot;
	try {
		snapshot = await snapshotCampaign(context, { ...common, id, state: 'draft', startAt, records: records ?? (async function* () {})(), draft, claim: claim && { ...claim, answer: { kind: 'campaign' } } });
	} catch (error) {
		await giveBackDraftPlace(context, id).catch(() => undefined);
		throw error;
	}
	context.log.info({ campaign: id, recipients: snapshot.accepted, rejected: snapshot.rejected }, 'draft campaign created');
	return { kind: 'campaign', ...snapshot };
}

/**
 * Starts a draft (running, or scheduled when it has a start time); a campaign that is no longer a
 * draft is left alone, so a retried call is harmless. Answers the campaign as GET shows it.
 */
export async function startCampaign(context: RunnerContext, id: string) {
	await startDraft(context, id);
	return campaignView(context, id);
}

/** A campaign's status and settings: GET /api/campaigns/:id. */
export async function campaignView(context: RunnerContext, id: string) {
	const campaign = await getCampaign(context, id);
	return campaignDetail(campaign, await statusOf(context, campaign));
}

/** Cancel a campaign, or stop a cron schedule (its past runs stay). */
export async function cancel(context: RunnerContext, id: string) {
	if (await findSchedule(context, id)) {
		await removeSchedule(context, id);
		return { id, state: 'cancelled' as const, schedule: true, cancelled: 0 };
	}
	return { id, ...(await cancelCampaign(context, id)) };
}

/**
 * How long a key stays `creating` unless its work renews it: a create killed midway frees its key
 * within this time, so the client's retry runs instead of answering 409 for a day.
 */
export const IDEMPOTENCY_LEASE_MS = 30_000;
const LEASE_RENEW_MS = IDEMPOTENCY_LEASE_MS / 3;
const LEASE_PREFIX = 'creating:';

/**
 * The slot and lease token of a request running under an Idempotency-Key. A work that commits in
 * one Redis script (a create, a draft's chunk) writes its answer to the slot in that same script,
 * and only while the lease is still its own: no crash falls between "done" and "answer kept".
 */
export interface OnceClaim {
	slot: string;
	token: string;
}

/** KEYS: slot. ARGV: token, lease ms. Extends the lease only while it is still this request's. */
const RENEW_LEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
/** KEYS: slot. ARGV: token, answer, seconds. Keeps the answer unless another request holds the slot (or the commit kept it already). */
const SETTLE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) return 1 end return 0`;
/** KEYS: slot. ARGV: token. Frees the slot of a request that failed, unless its answer was committed. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Does `work` once per `key` within 24 h and keeps its answer: a client that retries (an n8n
 * execution run again) gets the first answer back instead of a second campaign or a chunk added
 * twice. `scope` keeps keys of different requests apart (a chunk's key is scoped to its campaign);
 * the create's scope is empty. While the first request runs, the key holds a lease of
 * IDEMPOTENCY_LEASE_MS that the work renews, and a second request with the key is a conflict
 * (409); a request that failed, or whose process died, frees the key (at once, or when the lease
 * runs out), so the retry runs.
 */
export async function once<T extends object>(context: RunnerContext, scope: string, key: string, work: (claim: OnceClaim) => Promise<T>): Promise<T & { replayed: boolean }> {
	const { redis } = context;
	const slot = context.keys.idempotency(createHash('sha256').update(scope === '' ? key : `${scope}\n${key}`).digest('hex'));
	const token = `${LEASE_PREFIX}${randomBytes(12).toString('hex')}`;
	if ((await redis.set(slot, token, 'PX', IDEMPOTENCY_LEASE_MS, 'NX')) !== 'OK') {
		const existing = await redis.get(slot);
		if (existing === null || existing.startsWith(LEASE_PREFIX)) throw new ConflictError(`a request with this Idempotency-Key is still in progress; ask again in a moment (a request that died frees its key within ${IDEMPOTENCY_LEASE_MS / 1000} s)`);
		return { ...(JSON.parse(existing) as T), replayed: true };
	}
	const renew = setInterval(() => {
		luaScript(redis, 'convoRenewLease', RENEW_LEASE, 1)([slot], [token, IDEMPOTENCY_LEASE_MS]).catch((error: Error) => context.log.warn({ err: error.message }, 'idempotency lease not renewed'));
	}, LEASE_RENEW_MS);
	renew.unref();
	try {
		const answer = await work({ slot, token });
		await luaScript(redis, 'convoSettleOnce', SETTLE, 1)([slot], [token, JSON.stringify(answer), IDEMPOTENCY_SECONDS]);
		return { ...answer, replayed: false };
	} catch (error) {
		await luaScript(redis, 'convoReleaseOnce', RELEASE, 1)([slot], [token]).catch(() => undefined);
		throw error;
	} finally {
		clearInterval(renew);
	}
}

/** Create once per `key` within 24 h (see once). */
export function createCampaignOnce(context: RunnerContext, key: string, input: CampaignSettings, records?: AsyncIterable<SourceRecord>, names: SettingNames = CLI_NAMES): Promise<CreateAnswer & { replayed: boolean }> {
	return once(context, '', key, (claim) => createCampaign(context, input, records, names, claim));
}
