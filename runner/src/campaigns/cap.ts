/**
 * One frequency cap across campaigns (#23): "at most 1 campaign message per 24 h, 3 per 7 days" to
 * a phone, whichever campaign or cron run sends it. The policy is the sending number's own (`cap
 * set`), else the business default (RUNNER_FREQUENCY_CAP), else none. It is enforced per sending
 * number (docs/decisions.md, "#23: one frequency cap across campaigns"): the claim's script runs
 * on the number's Cluster slot, so the phone's send times live in the number's group.
 *
 * The rule lives in Lua, once (LUA_CAP): the start gate's claim (ledger.ts openInRun and claimAt)
 * asks capVerdict before it claims a pending recipient, and records the claim's time on the phone
 * with capCount in the same step, so two processes cannot both see room for one phone. A recipient
 * over the cap is written `capped` with the time it would next be allowed, or, in a campaign that
 * waits (`when_capped` wait), stays pending in the campaign's waiting set until then, and the
 * feeder feeds it again when due (feedWaiting) without reading the ledger. A claim settled as
 * provably not sent (back to pending, failed, not_sent) gives its count back (capGiveBack).
 *
 * Per phone: a string key of the last N claim times (ms on Redis's clock, N the policy's largest
 * count), expiring after the longest rule's window: bounded, and gone once it no longer matters.
 */
import type { RunnerConfig } from '../config';
import type { Keys } from '../keys';
import { NO_CAP, parseCapPolicy } from '../capRules';
import { encodeCapPolicy, shownPolicy } from './capPolicy';
import { luaScript, type RedisConnection } from '../redis';

/**
 * What the cap's functions use of a RunnerContext. Named here, not imported: the context holds the
 * ledger, whose scripts hold the cap's Lua, so importing it would close a cycle.
 */
interface CapContext {
	redis: RedisConnection;
	keys: Keys;
	config: RunnerConfig;
}

/**
 * The cap's Lua: parsed policies, the verdict, the count and its giving back. `cap` is a table of
 * the script's keys and the default policy: { policy = number's policy key, sends = the per-phone
 * key prefix (keys.ts capSends), waiting = the campaign's waiting set, recipients = its snapshot,
 * default = the business default ('' for none) }. The times are ms on Redis's clock (TIME).
 */
export const LUA_CAP = `
local function capNow()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The policy in force: the number's own, else the default; nil for none.
local function capPolicy(cap)
  local policy = redis.call('GET', cap.policy) or cap.default
  if policy == '' or policy == '${NO_CAP}' then return nil end
  return policy
end
local function capTimes(text)
  local times = {}
  for t in string.gmatch(text or '', '%d+') do times[#times + 1] = tonumber(t) end
  return times
end
-- When the phone is next allowed under the policy (nil: now), and the rule that holds it back.
local function capNext(policy, times, now)
  local at, label
  for l, count, window in string.gmatch(policy, '([^,:]+):(%d+):(%d+)') do
    local kth = times[#times - tonumber(count) + 1]
    if kth and kth + tonumber(window) > now and (not at or kth + tonumber(window) > at) then at = kth + tonumber(window); label = l end
  end
  return at, label
end
-- A snapshot row's phone (campaigns/schema.ts: the row starts with its line and the phone).
local function rowPhone(row)
  return row and string.match(row, '^%[%d+,"(%d+)"')
end
-- The policy of a marketing send to \`phone\` (a transactional campaign is not capped nor counted);
-- c: the campaign's claim settings (ledger.ts claimSettings). The policy is read once per script
-- call (cap.on): one GET per call when no cap is set.
local function capApplies(cap, c, phone)
  if not cap or not phone or c.transactional then return nil end
  if cap.on == nil then cap.on = capPolicy(cap) or false end
  return cap.on or nil
end
local function isoTime(ms)
  local s = math.ceil(ms / 1000)
  local days = math.floor(s / 86400)
  local rem = s - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400 + (m <= 2 and 1 or 0)
  return string.format('%04d-%02d-%02dT%02d:%02d:%02dZ', y, m, d, math.floor(rem / 3600), math.floor(rem % 3600 / 60), rem % 60)
end
-- A pending recipient over the cap: written capped (final), or left pending in the waiting set
-- until allowed when its campaign waits. True when it is not to be claimed now.
local function capVerdict(cap, c, phone, meta, ledger, i, r)
  local policy = capApplies(cap, c, phone)
  if not policy then return false end
  local at, label = capNext(policy, capTimes(redis.call('GET', cap.sends .. phone)), capNow())
  if not at then return false end
  if redis.call('HGET', meta, 'when_capped') == 'wait' then
    redis.call('ZADD', cap.waiting, at, i)
    -- A day past its latest member: the set of a campaign cancelled while some waited goes too.
    local keep = at - capNow() + 86400000
    if redis.call('PTTL', cap.waiting) < keep then redis.call('PEXPIRE', cap.waiting, keep) end
    return true
  end
  r.s = 'k'; r.err = 'frequency cap ' .. label .. ': next allowed ' .. isoTime(at)
  write(ledger, i, r); move(meta, 'p', 'k')
  return true
end
-- A claim at now counts on its phone: the last N times kept, for the longest window.
local function capCount(cap, c, phone, now)
  local policy = capApplies(cap, c, phone)
  if not policy then return end
  local keep, longest = 0, 0
  for _, count, window in string.gmatch(policy, '([^,:]+):(%d+):(%d+)') do
    keep = math.max(keep, tonumber(count)); longest = math.max(longest, tonumber(window))
  end
  local times = capTimes(redis.call('GET', cap.sends .. phone))
  times[#times + 1] = tonumber(now)
  local from = math.max(1, #times - keep + 1)
  redis.call('SET', cap.sends .. phone, table.concat(times, ',', from), 'PX', longest)
end
-- A claim proved not sent: its time leaves the phone's. \`claimedAt\`: the claim's time, or a time
-- after it (an unknown's record keeps its settle's); the latest time not after it is the claim's,
-- unless another claim of the phone came between (then that one's goes: the count is right).
local function capForget(cap, phone, claimedAt)
  local key = cap.sends .. phone
  local times = capTimes(redis.call('GET', key))
  for at = #times, 1, -1 do
    if times[at] <= tonumber(claimedAt) then
      table.remove(times, at)
      if #times == 0 then redis.call('DEL', key) else redis.call('SET', key, table.concat(times, ','), 'KEEPTTL') end
      return
    end
  end
end
local function capGiveBack(cap, meta, i, claimedAt)
  if not cap or redis.call('HGET', meta, 'transactional') == '1' then return end
  local phone = rowPhone(redis.call('HGET', cap.recipients, i))
  if not phone then return end
  capForget(cap, phone, claimedAt)
end
`;

/** The business default as the scripts read it ('' for none), parsed once per process. */
const defaults = new WeakMap<RunnerConfig, string>();
export function defaultCapPolicy(config: RunnerConfig): string {
	const known = defaults.get(config);
	if (known !== undefined) return known;
	const text = config.RUNNER_FREQUENCY_CAP;
	const encoded = text === undefined ? '' : encodeCapPolicy(parseCapPolicy(text, 'RUNNER_FREQUENCY_CAP'));
	defaults.set(config, encoded);
	return encoded;
}

/** The cap's keys for a campaign's scripts, in the order they take them: policy, per-phone prefix, waiting set. */
export const capKeys = (keys: Keys, from: string, campaign: string) => [keys.capPolicy(from), keys.capSends(from), keys.capWaiting(from, campaign)];

export interface CapView {
	from: string;
	/** What holds for the number: its own policy, else the default, else none. */
	policy: string;
	source: 'number' | 'default' | 'none';
	/** The number's own (null: none set) and the business default (null: none). */
	number_policy: string | null;
	default_policy: string | null;
}

export async function showCap(context: CapContext, from: string): Promise<CapView> {
	const own = await context.redis.get(context.keys.capPolicy(from));
	const fallback = defaultCapPolicy(context.config);
	const number_policy = own === null ? null : shownPolicy(own);
	const default_policy = fallback === '' ? null : shownPolicy(fallback);
	const source = number_policy !== null ? 'number' : default_policy !== null ? 'default' : 'none';
	return { from, policy: number_policy ?? default_policy ?? NO_CAP, source, number_policy, default_policy };
}

/** Sets the number's own policy (`none`: no cap for it, whatever the default); applies from the next claim. */
export async function setCap(context: CapContext, from: string, policy: string, setting: string): Promise<CapView> {
	await context.redis.set(context.keys.capPolicy(from), encodeCapPolicy(parseCapPolicy(policy, setting)));
	return showCap(context, from);
}

/** Removes the number's own policy: the default holds again. */
export async function clearCap(context: CapContext, from: string): Promise<CapView> {
	await context.redis.del(context.keys.capPolicy(from));
	return showCap(context, from);
}

/**
 * KEYS: the number's policy, the per-phone prefix. ARGV: the default policy, then phones. For a
 * dry run: the rule that would cap each phone now, '' where none would.
 */
const WOULD_CAP = `${LUA_CAP}
local policy = capPolicy({ policy = KEYS[1], default = ARGV[1] })
local now = capNow()
local answer = {}
for i = 2, #ARGV do
  local label = ''
  if policy then
    local at, l = capNext(policy, capTimes(redis.call('GET', KEYS[2] .. ARGV[i])), now)
    if at then label = l end
  end
  answer[#answer + 1] = label
end
return answer
`;

/** For a dry run of a campaign from `from`: the rule that would cap each phone now ('' for none). */
export async function wouldCap(context: CapContext, from: string, phones: string[]): Promise<string[]> {
	if (phones.length === 0) return [];
	const check = luaScript(context.redis, 'convoWouldCap', WOULD_CAP, 2);
	return (await check([context.keys.capPolicy(from), context.keys.capSends(from)], [defaultCapPolicy(context.config), ...phones])) as string[];
}

/**
 * KEYS: the number's policy, the per-phone prefix. ARGV: the default policy, the phone. A test
 * send's claim, by the claim's own rule: { -1, rule, next allowed } when the cap holds the phone
 * back, else the claim's time counted on the phone ({ 0 } when no cap applies: nothing counted).
 */
const TEST_CLAIM = `${LUA_CAP}
local cap = { policy = KEYS[1], sends = KEYS[2], default = ARGV[1] }
local policy = capApplies(cap, {}, ARGV[2])
if not policy then return { 0 } end
local now = capNow()
local at, label = capNext(policy, capTimes(redis.call('GET', cap.sends .. ARGV[2])), now)
if at then return { -1, label, isoTime(at) } end
capCount(cap, {}, ARGV[2], now)
return { now }
`;

/** KEYS: the per-phone prefix. ARGV: the phone, the claim's time. A test send proved not sent gives its count back. */
const TEST_GIVE_BACK = `${LUA_CAP}
capForget({ sends = KEYS[1] }, ARGV[1], ARGV[2])
return 1
`;

/**
 * A marketing test send from `from` to `phone` (digits) takes its place under the cap as a
 * recipient's send does: `held` names the rule and when the phone is next allowed; otherwise
 * `countedAt` is the claim's time (to give back when the send provably did not go), or undefined
 * when no cap applies.
 */
export async function claimTestSend(context: CapContext, from: string, phone: string): Promise<{ held: { rule: string; nextAllowed: string } } | { countedAt?: number }> {
	const claim = luaScript(context.redis, 'convoCapTestClaim', TEST_CLAIM, 2);
	const [at, rule, nextAllowed] = (await claim([context.keys.capPolicy(from), context.keys.capSends(from)], [defaultCapPolicy(context.config), phone])) as [number, string?, string?];
	if (Number(at) < 0) return { held: { rule: rule as string, nextAllowed: nextAllowed as string } };
	return Number(at) > 0 ? { countedAt: Number(at) } : {};
}

export async function giveBackTestSend(context: CapContext, from: string, phone: string, countedAt: number): Promise<void> {
	const giveBack = luaScript(context.redis, 'convoCapTestGiveBack', TEST_GIVE_BACK, 1);
	await giveBack([context.keys.capSends(from)], [phone, countedAt]);
}
