/**
 * Events are written to an outbox (a Redis list, one per sending number and one per collection, in
 * the group of what changed: keys.ts) by the very Lua script that makes the transition they report: a campaign completing in the ledger's settle, a pause, a cancel's last pending
 * recipient moved, a reindex run's final state. The event then exists exactly when the transition
 * happened, once, whichever process made it, and survives that process dying a moment later.
 * The dispatcher (outbox.ts) moves it into the delivery queue.
 */

/**
 * Lua: append one event for the campaign or run whose hash is `source`. Its `events` counter
 * numbers them, which makes the id: the same transition can never get two ids, and two
 * transitions never share one. The hash is copied as it is at that instant (the data is the
 * status then, not whatever it is when the delivery goes out).
 */
export const LUA_EMIT = `
local function emit(outbox, source, id, kind, now)
  local n = redis.call('HINCRBY', source, 'events', 1)
  redis.call('RPUSH', outbox, cjson.encode({ id = 'ev-' .. id .. '-' .. n, type = kind, at = tostring(now), hash = redis.call('HGETALL', source) }))
end
`;

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

/** KEYS: source hash, outbox. ARGV: id, event type, now. For a campaign or run born in a final state. */
export const EMIT_SCRIPT = `${LUA_EMIT}
emit(KEYS[2], KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return 1
`;
