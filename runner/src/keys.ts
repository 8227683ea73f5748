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
	/** String: an API Idempotency-Key (hashed) -> the campaign it created, for 24 h. */
	idempotency(keyHash: string): string;
	/** Lock: one feeder tick at a time across processes. */
	feederLock: string;
}

export function keysFor(prefix: string): Keys {
	return {
		prefix,
		campaigns: `${prefix}:campaigns`,
		running: `${prefix}:running`,
		finishing: `${prefix}:finishing`,
		numbers: `${prefix}:numbers`,
		schedules: `${prefix}:schedules`,
		schedule: (id) => `${prefix}:schedule:${id}`,
		campaign: (id) => `${prefix}:campaign:${id}`,
		recipients: (id) => `${prefix}:campaign:${id}:rcp`,
		ledger: (id) => `${prefix}:campaign:${id}:ledger`,
		ticks: (id) => `${prefix}:campaign:${id}:ticks`,
		idempotency: (keyHash) => `${prefix}:idempotency:${keyHash}`,
		feederLock: `${prefix}:lock:feeder`,
	};
}
