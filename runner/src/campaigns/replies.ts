/**
 * Who replied to a campaign: per campaign one hash in its number's group (keys.replies), recipient
 * index -> epoch ms of the first reply, and `count`, the number of recipients that replied, moved
 * in the same script as the field it counts. Only the time is kept, never the reply's text
 * (docs/decisions.md). The hash lives as long as the campaign's own (it takes the campaign hash's
 * expiry, which only a draft has).
 */
import type { RunnerContext } from '../context';
import { luaScript } from '../redis';

const COUNT = 'count';

/**
 * KEYS: meta, replies (the campaign's number's group). ARGV: index, ms.
 * The first reply of a recipient is kept and counted; a later one changes nothing. A campaign that
 * is gone gets nothing. Returns 1 when new, else 0.
 */
const RECORD_REPLY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[2], '${COUNT}', 1)
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`;

/** Records that recipient `index` of the campaign replied at `atMs` (first reply kept); true if new. */
export async function recordReply(context: RunnerContext, campaign: { id: string; from: string }, index: number, atMs: number): Promise<boolean> {
	const { redis, keys } = context;
	const run = luaScript(redis, 'convoRecordReply', RECORD_REPLY, 2);
	return Number(await run([keys.campaign(campaign.from, campaign.id), keys.replies(campaign.from, campaign.id)], [index, Math.round(atMs)])) === 1;
}

/** How many recipients of the campaign replied. */
export async function repliedCount(context: RunnerContext, campaign: { id: string; from: string }): Promise<number> {
	return Number((await context.redis.hget(context.keys.replies(campaign.from, campaign.id), COUNT)) ?? 0);
}

/** When each recipient (by index) first replied, epoch ms, or undefined. */
export async function repliedAt(context: RunnerContext, campaign: { id: string; from: string }, indexes: number[]): Promise<(number | undefined)[]> {
	if (indexes.length === 0) return [];
	const values = await context.redis.hmget(context.keys.replies(campaign.from, campaign.id), ...indexes.map(String));
	return values.map((value) => (value === null ? undefined : Number(value)));
}
