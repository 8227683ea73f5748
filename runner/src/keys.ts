/**
 * Every Redis key and BullMQ queue the runner uses, in one place. Each sits in one of four kinds
 * of group, named by the {hash tag} that follows the prefix, so a Redis Cluster places a group in
 * one slot and spreads the groups over its masters (docs/decisions/redis/cluster-key-groups.md):
 *
 *   {n<from>}        a sending number: its send queue, its start gate, and every campaign that
 *                    sends from it (hash, ledger, recipients, ticks), with the number's running and
 *                    finishing sets, its outbox of events and its Idempotency-Keys. A send's
 *                    scripts (gate, claim, settle) and a campaign's state changes stay in it.
 *   {c<collection>}  a search collection: its items, its lease, and its reindex runs with their outbox.
 *   {budget}         the business's daily messaging limit and the customers it counted
 *                    (audience/budget.ts): it spans every number, so it takes its own slot.
 *   {g}              what is not one number's or one collection's: the lists of campaigns, numbers,
 *                    drafts, runs and schedules, where each campaign and run lives, webhooks,
 *                    sessions, the runner processes alive, the feeder's
 *                    lock, and the control, reindex and events queues.
 *
 * No script, MULTI or pipeline touches two groups; a change that spans them is made group by
 * group in an order that a crash cannot harm and that the feeder repairs (see keyGroups.ts, create.ts).
 */
export interface Keys {
	prefix: string;
	/** Sorted set: campaign id by creation time (every campaign, listed once its commit is listed: keyGroups.ts). */
	campaigns: string;
	/** Hash: campaign id -> its sending number, the group its keys live in. */
	homes: string;
	/** Set: business numbers that have a group (what workers, the feeder and the dispatcher walk). */
	numbers: string;
	/** Sorted set: draft campaign id by the time it expires unless started. */
	drafts: string;
	/** Hash per cron schedule. */
	schedule(id: string): string;
	/** Sorted set: schedule id by creation time. */
	schedules: string;
	/** Lock: one feeder tick at a time across processes. */
	feederLock: string;
	/** String per console session (SHA-256 of its id, never the id), expiring with it; deleted at sign-out. */
	session(idHash: string): string;
	/** Counter per kind of secret (token, events) and client address: wrong ones in the current period (http/auth.ts). */
	authFailures(kind: string, address: string): string;
	/** String per runner process (JSON of non-secret facts), expiring unless its heartbeat renews it (presence.ts). */
	runner(processId: string): string;
	/**
	 * Sorted set: runner process id by the time its key expires, so the live ones are listed without
	 * SCAN (a cluster's SCAN is per node).
	 */
	runners: string;

	/** Hash per business number: its rate and the next free send start time (sending/spacing.ts). */
	spacing(from: string): string;
	/** Sorted set per business number: the sends started in the last second (sending/spacing.ts). */
	startLog(from: string): string;
	/** Set per number: ids of its campaigns whose state is running (what the feeder walks). */
	running(from: string): string;
	/** Set per number: ids of its ended (cancelled, failed) campaigns whose pending recipients are still being moved. */
	finishing(from: string): string;
	/**
	 * Sorted set per number: campaigns committed and not yet in `campaigns` (by creation time; keyGroups.ts lists them).
	 */
	unlisted(from: string): string;
	/** List per number of JSON events, written in the same script as the transition they report (webhooks/events.ts). */
	outbox(from: string): string;
	/** Hash: the campaign's settings, state, counters and feed cursor. */
	campaign(from: string, id: string): string;
	/** Hash: recipient index -> the snapshot row (line, phone, variables, buttons). */
	recipients(from: string, id: string): string;
	/** Hash: recipient index -> ledger record (see ledger.ts). */
	ledger(from: string, id: string): string;
	/** Hash: epoch second -> sends settled in it, for the current rate. */
	ticks(from: string, id: string): string;
	/** Hash: recipient index -> epoch ms of its first reply, and `count` (tracking/replies.ts). */
	replies(from: string, id: string): string;
	/**
	 * Hash: phone -> "line:index" of each accepted recipient, so a draft's later chunks refuse a
	 * phone twice and a reply finds its recipient without a scan (tracking/attribution.ts). Older
	 * campaigns hold "line" only in a draft's, and none once started.
	 */
	phones(from: string, id: string): string;
	/**
	 * Hashes a create writes its rows to before its commit renames them to recipients/ledger/phones:
	 * nothing reads them, and they expire, so a create that dies midway leaves nothing behind.
	 */
	staging(
		from: string,
		id: string,
		attempt: string,
	): { recipients: string; ledger: string; phones: string; zones: string };
	/**
	 * Hash of a campaign with a send window (audience/windows.ts): "<zone>.<chunk>" -> the indexes
	 * of that zone's recipients, comma-separated, up to ZONE_CHUNK per field, in source order; what
	 * the feeder feeds an open zone from without looking at the rest of the audience.
	 */
	zoneIndexes(from: string, id: string): string;
	/** Hash: zone number -> "opening:chunk:offset", where the feeder is in that zone's current opening. */
	zoneFeed(from: string, id: string): string;
	/**
	 * String: an API Idempotency-Key (hashed) -> the first answer to the request, for 24 h. It sits
	 * with the number of the campaign it creates or fills, so the commit keeps the answer in its step.
	 */
	idempotency(from: string, keyHash: string): string;

	/** Hash per campaign: recipient index -> its delivery tracking record (tracking/tracking.ts). */
	tracked(from: string, id: string): string;
	/** Sorted set per number: `campaign:index` by when its next delivery check is due. */
	trackDue(from: string): string;
	/** Set per number: its campaigns whose delivery tracking has not settled. */
	tracking(from: string): string;
	/**
	 * Delivery tracking's own clock (next free check time) and
	 * its tick's lock; where new campaigns were looked for up to.
	 */
	trackGate: string;
	trackLock: string;
	trackSeen: string;

	/**
	 * The business's suppression list (audience/suppression.ts): the source of truth in the global
	 * group, a copy of it in each number's group for the claim's check, and versions that say how far
	 * each copy is.
	 */
	suppression: SuppressionKeys;
	/** String per number: its own frequency cap policy, as the claim reads it (audience/cap.ts). */
	capPolicy(from: string): string;
	/**
	 * String per phone a number sent to under a cap: the last claim times, expiring after the
	 * policy's longest period. The claim's script appends the phone to this prefix (the phone is in
	 * the snapshot row it reads), so the key is in the number's group like the prefix it is given.
	 */
	capSends(from: string, phone?: string): string;
	/** Sorted set per campaign that waits out the cap: recipient index by when it is next allowed. */
	capWaiting(from: string, id: string): string;
	/** Hash per number: its sends and refusals per day, the last 8 days (audience/dailyCounts.ts). */
	dailyCounts(from: string): string;
	/**
	 * Every key of the campaign's own, its hash first (what a deleted campaign leaves behind:
	 * campaigns/deletion.ts). A key added per campaign belongs here too.
	 */
	campaignKeys(from: string, id: string): string[];
	/** Hash: a deleted campaign's tracking records, while their due checks are taken out (campaigns/deletion.ts). */
	trackedAside(from: string, id: string): string;

	/** The business's daily messaging limit (audience/budget.ts), in its own group. */
	budget: BudgetKeys;

	reindex: ReindexKeys;
	webhooks: WebhookKeys;
}

/** Keys of the daily messaging limit (audience/budget.ts); both in the {budget} group. */
interface BudgetKeys {
	/** String: the limit the operator set (a count or `unlimited`); absent: RUNNER_DAILY_LIMIT, else none. */
	limit: string;
	/** The counted customers: phone -> when it was counted (ms, the budget's clock); kept only under a limit. */
	customers: string;
}

/** Keys of the suppression list (audience/suppression.ts). */
interface SuppressionKeys {
	/** Hash: phone -> `source|ms|reason` (global). */
	entries: string;
	/** Sorted set: phone by the time it was suppressed, for paging the list (global). */
	listed: string;
	/**
	 * Sorted set: phone by the version of its last change, added or removed (global): what a copy left behind replays.
	 */
	changed: string;
	/** Counter: the list's version, one step per change (global). */
	version: string;
	/** String: the version `changed` was pruned of the phones no longer listed up to (global; repairCopies). */
	pruned: string;
	/**
	 * Hash: phone -> `o|ms` or `i|ms`, its newest opt-out or opt-in
	 * keyword message applied and that message's time (global).
	 */
	keywords: string;
	/** Sorted set: the phones of `keywords` by their message's time, so the oldest go first past the cap (global). */
	keywordsAt: string;
	/** Set: the numbers that hold a copy (global): where a change goes. */
	copies: string;
	/** Hash per number: phone -> the note its claim writes (the copy the claim reads, in the number's group). */
	copy(from: string): string;
	/** String per number: the version its copy holds every change up to; absent when the number holds no copy. */
	copyVersion(from: string): string;
	/** Sorted set per number: its campaigns not finished, which keep its copy (by when each took it). */
	copyUsers(from: string): string;
}

/** Keys of webhook registrations and their deliveries (webhooks/); all in the global group. */
interface WebhookKeys {
	/** Sorted set: webhook id by creation time. */
	all: string;
	/** Hash per webhook: url, events, description, created_at (never its secret). */
	webhook(id: string): string;
	/** Lock: one process moves the outboxes into the delivery queue at a time. */
	outboxLock: string;
	/** Sorted set per webhook: its deliveries in flight (job id by the time its slot lapses), for the per-webhook cap. */
	inflight(id: string): string;
	/** List per webhook: its last delivery attempts, newest first, at most RECENT_DELIVERIES (webhooks/deliveries.ts). */
	deliveries(id: string): string;
	/**
	 * Sorted set: `webhook id:event id` of every event a receiver recorded as received, by its time;
	 * kept 24 h, at most RUNNER_MAX_RECEIPTS (webhooks/receipts.ts).
	 */
	receipts: string;
}

/** Keys of reindex runs (reindex/) and of the collections they keep in sync. */
interface ReindexKeys {
	/** Sorted set: run id by creation time. */
	runs: string;
	/** Hash: run id -> its collection, the group its keys live in. */
	homes: string;
	/** Set: collections that have a group (what the dispatcher walks for events). */
	collections: string;
	/** Sorted set of cron schedules; a string (JSON) per schedule. */
	schedules: string;
	schedule(id: string): string;
	/** Hash: the run's settings, state, counters and progress. */
	run(collection: string, id: string): string;
	/** Hash, during one attempt of a run: external_id -> line where the source first held it. */
	seen(collection: string, id: string, attempt: number): string;
	/**
	 * List, during one attempt of a run: the active ids the collection listed that the source did not
	 * hold (what deactivation goes through).
	 */
	missing(collection: string, id: string, attempt: number): string;
	/** Lists of JSON notes kept for the report: rejected rows; failures, mismatches, foreign items. */
	rejected(collection: string, id: string): string;
	problems(collection: string, id: string): string;
	/** Hash: epoch second -> rows read in it, for the current rate. */
	ticks(collection: string, id: string): string;
	/** Hash: external_id -> what the last successful upsert sent (reindex/itemState.ts). */
	items(collection: string): string;
	/** Hash: embedding key -> embedding_json sent, shared by the items that sent it. */
	embeddings(collection: string): string;
	/** String: the run that holds the collection (a lease renewed while it lives). */
	lock(collection: string): string;
	/** List of JSON events of the collection's runs (reindex.finished), written with the run's final state. */
	outbox(collection: string): string;
}

/** How long an Idempotency-Key keeps the first answer (core/campaigns.ts once). */
export const IDEMPOTENCY_SECONDS = 24 * 3600;

/**
 * The hash tags of the groups. None holds ":" (BullMQ refuses it in a queue name); numbers are
 * digits and collections UUIDs, so a tag never holds a brace either.
 */
export const GLOBAL_TAG = '{g}';
const BUDGET_TAG = '{budget}';
export const numberTag = (from: string) => `{n${from}}`;
const collectionTag = (collection: string) => `{c${collection}}`;

export function keysFor(prefix: string): Keys {
	const global = `${prefix}:${GLOBAL_TAG}`;
	const number = (from: string) => `${prefix}:${numberTag(from)}`;
	const campaign = (from: string, id: string) => `${number(from)}:campaign:${id}`;
	const collection = (name: string) => `${prefix}:${collectionTag(name)}`;
	const run = (name: string, id: string) => `${collection(name)}:reindex:${id}`;
	/** The campaign's keys beside its hash, in one place so that campaignKeys lists every one. */
	const ofCampaign = {
		recipients: (from: string, id: string) => `${campaign(from, id)}:rcp`,
		ledger: (from: string, id: string) => `${campaign(from, id)}:ledger`,
		ticks: (from: string, id: string) => `${campaign(from, id)}:ticks`,
		replies: (from: string, id: string) => `${campaign(from, id)}:replies`,
		phones: (from: string, id: string) => `${campaign(from, id)}:phones`,
		zoneIndexes: (from: string, id: string) => `${campaign(from, id)}:zones`,
		zoneFeed: (from: string, id: string) => `${campaign(from, id)}:zonefeed`,
		tracked: (from: string, id: string) => `${campaign(from, id)}:trk`,
		capWaiting: (from: string, id: string) => `${campaign(from, id)}:capwait`,
	};
	return {
		prefix,
		campaigns: `${global}:campaigns`,
		homes: `${global}:homes`,
		numbers: `${global}:numbers`,
		drafts: `${global}:drafts`,
		schedules: `${global}:schedules`,
		schedule: (id) => `${global}:schedule:${id}`,
		feederLock: `${global}:lock:feeder`,
		session: (idHash) => `${global}:session:${idHash}`,
		authFailures: (kind, address) => `${global}:authfail:${kind}:${address}`,
		runner: (processId) => `${global}:runner:${processId}`,
		runners: `${global}:runners`,

		spacing: (from) => `${number(from)}:spacing`,
		startLog: (from) => `${number(from)}:starts`,
		running: (from) => `${number(from)}:running`,
		finishing: (from) => `${number(from)}:finishing`,
		unlisted: (from) => `${number(from)}:unlisted`,
		outbox: (from) => `${number(from)}:outbox`,
		campaign,
		...ofCampaign,
		campaignKeys: (from, id) => [campaign(from, id), ...Object.values(ofCampaign).map((key) => key(from, id))],
		trackedAside: (from, id) => `${campaign(from, id)}:trk:deleting`,
		staging: (from, id, attempt) => {
			const staged = `${number(from)}:staging:${id}:${attempt}`;
			return {
				recipients: `${staged}:rcp`,
				ledger: `${staged}:ledger`,
				phones: `${staged}:phones`,
				zones: `${staged}:zones`,
			};
		},
		idempotency: (from, keyHash) => `${number(from)}:idempotency:${keyHash}`,
		trackDue: (from) => `${number(from)}:trkdue`,
		tracking: (from) => `${number(from)}:tracking`,
		trackGate: `${global}:trkgate`,
		trackLock: `${global}:lock:tracking`,
		trackSeen: `${global}:trkseen`,
		capPolicy: (from) => `${number(from)}:cap`,
		capSends: (from, phone = '') => `${number(from)}:capsent:${phone}`,
		dailyCounts: (from) => `${number(from)}:daily`,

		budget: {
			limit: `${prefix}:${BUDGET_TAG}:limit`,
			customers: `${prefix}:${BUDGET_TAG}:customers`,
		},

		suppression: {
			entries: `${global}:supp`,
			listed: `${global}:supp:listed`,
			changed: `${global}:supp:changed`,
			version: `${global}:supp:v`,
			pruned: `${global}:supp:pruned`,
			copy: (from) => `${number(from)}:supp`,
			copyVersion: (from) => `${number(from)}:supp:v`,
			copyUsers: (from) => `${number(from)}:supp:users`,
			keywords: `${global}:supp:kw`,
			keywordsAt: `${global}:supp:kwat`,
			copies: `${global}:supp:copies`,
		},
		reindex: {
			runs: `${global}:reindex:runs`,
			homes: `${global}:reindex:homes`,
			collections: `${global}:reindex:collections`,
			schedules: `${global}:reindex:schedules`,
			schedule: (id) => `${global}:reindex:schedule:${id}`,
			run,
			seen: (name, id, attempt) => `${run(name, id)}:seen:${attempt}`,
			missing: (name, id, attempt) => `${run(name, id)}:missing:${attempt}`,
			rejected: (name, id) => `${run(name, id)}:rejected`,
			problems: (name, id) => `${run(name, id)}:problems`,
			ticks: (name, id) => `${run(name, id)}:ticks`,
			items: (name) => `${collection(name)}:items`,
			embeddings: (name) => `${collection(name)}:emb`,
			lock: (name) => `${collection(name)}:lock`,
			outbox: (name) => `${collection(name)}:outbox`,
		},
		webhooks: {
			all: `${global}:webhooks`,
			webhook: (id) => `${global}:webhook:${id}`,
			outboxLock: `${global}:lock:outbox`,
			inflight: (id) => `${global}:webhook:${id}:inflight`,
			deliveries: (id) => `${global}:webhook:${id}:deliveries`,
			receipts: `${global}:receipts`,
		},
	};
}

/**
 * A new id for a campaign ("c…"), a reindex run ("r…"), a schedule ("s…") or a webhook ("w…"):
 * time-ordered, never all digits and without ":" (BullMQ refuses both in job ids, which embed these).
 */
export function newId(kind: 'c' | 'r' | 's' | 'w'): string {
	return `${kind}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}
