/**
 * A campaign's state changes, each one Lua script: the state is compared and set in one step, so
 * of two processes making the same change (two cancels, a cancel and a start) exactly one makes
 * it, and the event that reports it is written to the outbox in that same step (webhooks/events.ts).
 * The ledger's scripts (ledger.ts) make the two changes that happen per recipient: completed, and
 * paused after too many failures in a row.
 */
import type { RunnerEventType } from 'convo-contract';
import type { RunnerContext } from '../context';
import { campaignNumber } from '../homes';
import { luaScript } from '../redis';
import { LUA_EMIT } from '../webhooks/events';
import type { CampaignState } from './store';

/**
 * KEYS: meta, running, finishing, outbox, recipients, ledger, phones (the campaign's number's group).
 * ARGV: id, now, to, allowed states as ",a,b,", event type or "", ending "1"/"0", then field/value pairs.
 * Returns "ok:<previous state>", "no:<state>" (not allowed from there) or "missing".
 */
const TRANSITION = `${LUA_EMIT}
local meta, running, finishing, outbox, rcp, ledger, phones = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id, now, to, allowed, event, ending = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local state = redis.call('HGET', meta, 'state')
if not state then return 'missing' end
if not string.find(allowed, ',' .. state .. ',', 1, true) then return 'no:' .. state end
if ending == '1' then redis.call('SADD', finishing, id) end
redis.call('HSET', meta, 'state', to)
for i = 7, #ARGV, 2 do redis.call('HSET', meta, ARGV[i], ARGV[i + 1]) end
if to == 'running' then redis.call('SADD', running, id) else redis.call('SREM', running, id) end
if state == 'draft' then
  -- No longer a draft: its rows stay for good, and its phone index with them (a reply finds its
  -- recipient there: campaigns/attribution.ts). The global drafts list is another group:
  -- transition() takes it out after this step.
  redis.call('PERSIST', meta); redis.call('PERSIST', rcp); redis.call('PERSIST', ledger); redis.call('PERSIST', phones)
end
if event ~= '' then emit(outbox, meta, id, event, now) end
return 'ok:' .. state
`;

/**
 * KEYS: finishing, meta, outbox. ARGV: id, now. An ended campaign whose recipients are all final
 * (none pending, no send in flight): the one process whose SREM removes it from `finishing`
 * reports campaign.finished, with the final counts. While one is open it stays in `finishing`,
 * and the feeder asks again at its next tick.
 */
const FINISHED = `${LUA_EMIT}
local open = redis.call('HMGET', KEYS[2], 'n_p', 'n_c')
if (tonumber(open[1]) or 0) + (tonumber(open[2]) or 0) > 0 then return 0 end
if redis.call('SREM', KEYS[1], ARGV[1]) == 1 and redis.call('EXISTS', KEYS[2]) == 1 then
  emit(KEYS[3], KEYS[2], ARGV[1], 'campaign.finished', ARGV[2])
  return 1
end
return 0
`;

export interface TransitionOptions {
	/** The event this change is (campaign.paused; campaign.finished for a change that moves nothing). */
	event?: RunnerEventType;
	/** The campaign ends with pending recipients still to move or sends in flight: it joins `finishing`, and campaign.finished follows when every recipient is final. */
	ending?: boolean;
}

export type TransitionResult = { changed: true; previous: CampaignState } | { changed: false; state: CampaignState | undefined };

/**
 * Sets the state to `to` if it is one of `from`, with `fields`, atomically. A draft that stops
 * being one leaves the drafts list after the step (a process that dies between leaves it there
 * until takeDraftPlace finds it no draft, or its 24 h are up: draft.ts).
 */
export async function transition(context: RunnerContext, id: string, from: readonly CampaignState[], to: CampaignState, fields: Record<string, string | number> = {}, options: TransitionOptions = {}): Promise<TransitionResult> {
	const { redis, keys } = context;
	const number = await campaignNumber(context, id);
	if (number === undefined) return { changed: false, state: undefined };
	const run = luaScript(redis, 'convoTransition', TRANSITION, 7);
	const answer = String(
		await run(
			[keys.campaign(number, id), keys.running(number), keys.finishing(number), keys.outbox(number), keys.recipients(number, id), keys.ledger(number, id), keys.phones(number, id)],
			[id, Date.now(), to, `,${from.join(',')},`, options.event ?? '', options.ending ? '1' : '0', ...Object.entries(fields).flat()],
		),
	);
	if (answer.startsWith('ok:')) {
		const previous = answer.slice(3) as CampaignState;
		if (previous === 'draft') await redis.zrem(keys.drafts, id);
		return { changed: true, previous };
	}
	return { changed: false, state: answer.startsWith('no:') ? (answer.slice(3) as CampaignState) : undefined };
}

/** Called when an ended campaign may have no open recipient left; true for the one call that reported it. */
export async function reportFinished(context: RunnerContext, id: string): Promise<boolean> {
	const { redis, keys } = context;
	const number = await campaignNumber(context, id);
	if (number === undefined) return false;
	const run = luaScript(redis, 'convoFinished', FINISHED, 3);
	return Number(await run([keys.finishing(number), keys.campaign(number, id), keys.outbox(number)], [id, Date.now()])) === 1;
}
