/**
 * Every Redis key the runner writes, in one place. All share the prefix's {hash tag}, so on a
 * Redis Cluster a campaign's keys sit in one slot and its Lua scripts may touch them together.
 */
export interface Keys {
	prefix: string;
	/** Sorted set: campaign id by creation time. */
	campaigns: string;
	/** Set: ids of campaigns whose state is running (what the feeder walks). */
	running: string;
	/** Set: ids of ended (cancelled, failed) campaigns whose pending recipients are still being moved. */
	finishing: string;
	/** Set: business numbers that have a send queue (what workers listen to). */
	numbers: string;
	/** Hash per business number: its rate and the next free send start time (campaigns/spacing.ts). */
	spacing(from: string): string;
	/** Sorted set per business number: the sends started in the last second (campaigns/spacing.ts). */
	startLog(from: string): string;
	/** Hash per cron schedule. */
	schedule(id: string): string;
	/** Sorted set: schedule id by creation time. */
	schedules: string;
	/** Hash: the campaign's settings, state, counters and feed cursor. */
	campaign(id: string): string;
	/** Hash: recipient index -> the snapshot row (line, phone, variables, buttons). */
	recipients(id: string): string;
	/** Hash: recipient index -> ledger record (see ledger.ts). */
	ledger(id: string): string;
	/** Hash: epoch second -> sends settled in it, for the current rate. */
	ticks(id: string): string;
	/** Hash, while a campaign is a draft: phone -> line, so a phone is refused twice across its chunks. */
	phones(id: string): string;
	/** Sorted set: draft campaign id by the time it expires unless started. */
	drafts: string;
	/**
	 * Hashes a create writes its rows to before its commit renames them to recipients/ledger/phones:
	 * nothing reads them, and they expire, so a create that dies midway leaves nothing behind.
	 */
	staging(id: string, attempt: string): { recipients: string; ledger: string; phones: string };
	/** String: an API Idempotency-Key (hashed) -> the first answer to the request, for 24 h. */
	idempotency(keyHash: string): string;
	/** Lock: one feeder tick at a time across processes. */
	feederLock: string;
	/** String per console session (SHA-256 of its id, never the id), expiring with it; deleted at sign-out. */
	session(idHash: string): string;
	/** Counter per client address: failed tokens in the current window (http/auth.ts). */
	authFailures(address: string): string;
	reindex: ReindexKeys;
	webhooks: WebhookKeys;
}

/** Keys of webhook registrations and the events waiting to be handed to the delivery queue (webhooks/). */
interface WebhookKeys {
	/** Sorted set: webhook id by creation time. */
	all: string;
	/** Hash per webhook: url, events, description, created_at (never its secret). */
	webhook(id: string): string;
	/** List of JSON events written in the same script as the transition they report (the outbox). */
	outbox: string;
	/** Lock: one process moves the outbox into the delivery queue at a time. */
	outboxLock: string;
	/** Sorted set per webhook: its deliveries in flight (job id by the time its slot lapses), for the per-webhook cap. */
	inflight(id: string): string;
	/** String per event a webhook's receiver recorded as received (webhooks/receipts.ts), for 24 h. */
	receipt(webhookId: string, eventId: string): string;
}

/** Keys of reindex runs (reindex/) and of the collections they keep in sync. */
interface ReindexKeys {
	/** Sorted set: run id by creation time. */
	runs: string;
	/** Hash: the run's settings, state, counters and progress. */
	run(id: string): string;
	/** Hash, during one attempt of a run: external_id -> line where the source first held it. */
	seen(id: string, attempt: number): string;
	/** Lists of JSON notes kept for the report: rejected rows; failures, mismatches, foreign items. */
	rejected(id: string): string;
	problems(id: string): string;
	/** Hash: epoch second -> rows read in it, for the current rate. */
	ticks(id: string): string;
	/** Sorted set of cron schedules; a string (JSON) per schedule. */
	schedules: string;
	schedule(id: string): string;
	/** Hash: external_id -> what the last successful upsert sent (reindex/itemState.ts). */
	items(collection: string): string;
	/** Hash: embedding key -> embedding_json sent, shared by the items that sent it. */
	embeddings(collection: string): string;
	/** String: the run that holds the collection (a lease renewed while it lives). */
	lock(collection: string): string;
}

/** How long an Idempotency-Key keeps the first answer (core.ts once). */
export const IDEMPOTENCY_SECONDS = 24 * 3600;

export function keysFor(prefix: string): Keys {
	return {
		prefix,
		campaigns: `${prefix}:campaigns`,
		running: `${prefix}:running`,
		finishing: `${prefix}:finishing`,
		numbers: `${prefix}:numbers`,
		spacing: (from) => `${prefix}:spacing:${from}`,
		startLog: (from) => `${prefix}:starts:${from}`,
		schedules: `${prefix}:schedules`,
		schedule: (id) => `${prefix}:schedule:${id}`,
		campaign: (id) => `${prefix}:campaign:${id}`,
		recipients: (id) => `${prefix}:campaign:${id}:rcp`,
		ledger: (id) => `${prefix}:campaign:${id}:ledger`,
		ticks: (id) => `${prefix}:campaign:${id}:ticks`,
		phones: (id) => `${prefix}:campaign:${id}:phones`,
		drafts: `${prefix}:drafts`,
		staging: (id, attempt) => ({ recipients: `${prefix}:staging:${id}:${attempt}:rcp`, ledger: `${prefix}:staging:${id}:${attempt}:ledger`, phones: `${prefix}:staging:${id}:${attempt}:phones` }),
		idempotency: (keyHash) => `${prefix}:idempotency:${keyHash}`,
		feederLock: `${prefix}:lock:feeder`,
		session: (idHash) => `${prefix}:session:${idHash}`,
		authFailures: (address) => `${prefix}:authfail:${address}`,
		reindex: {
			runs: `${prefix}:reindex:runs`,
			run: (id) => `${prefix}:reindex:${id}`,
			seen: (id, attempt) => `${prefix}:reindex:${id}:seen:${attempt}`,
			rejected: (id) => `${prefix}:reindex:${id}:rejected`,
			problems: (id) => `${prefix}:reindex:${id}:problems`,
			ticks: (id) => `${prefix}:reindex:${id}:ticks`,
			schedules: `${prefix}:reindex:schedules`,
			schedule: (id) => `${prefix}:reindex:schedule:${id}`,
			items: (collection) => `${prefix}:collection:${collection}:items`,
			embeddings: (collection) => `${prefix}:collection:${collection}:emb`,
			lock: (collection) => `${prefix}:collection:${collection}:lock`,
		},
		webhooks: {
			all: `${prefix}:webhooks`,
			webhook: (id) => `${prefix}:webhook:${id}`,
			outbox: `${prefix}:events:outbox`,
			outboxLock: `${prefix}:lock:outbox`,
			inflight: (id) => `${prefix}:webhook:${id}:inflight`,
			receipt: (webhookId, eventId) => `${prefix}:webhook:${webhookId}:receipt:${eventId}`,
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
