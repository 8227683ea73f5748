/**
 * Events are written to an outbox (a Redis list, one per sending number and one per collection, in
 * the group of what changed: keys.ts) by the very Lua script that makes the transition they report: a campaign
 * completing in the ledger's settle, a pause, a cancel's last pending recipient moved, a reindex run's final state. The
 * event then exists exactly when the transition happened, once, whichever process made it, and survives that process
 * dying a moment later. The dispatcher (outbox.ts) moves it into the delivery queue.
 */

/** An outbox entry as the Lua above writes it. */
export interface OutboxEntry {
	id: string;
	type: string;
	at: string;
	/** HGETALL of the campaign's or run's hash: field, value, field, value ... */
	hash: string[];
}

export function hashOf(flat: string[]): Record<string, string> {
	const hash: Record<string, string> = {};
	for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]] = flat[i + 1];
	return hash;
}
