--[[
  The cap's Lua: parsed policies, the verdict, the count and its giving back. `cap` is a table of
  the script's keys and the default policy: { policy = number's policy key, sends = the per-phone
  key prefix (keys.ts capSends), waiting = the campaign's waiting set, recipients = its snapshot,
  default = the business default ('' for none) }. The times are ms on Redis's clock (TIME).

]]
local function capNow()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The policy in force: the number's own, else the default; nil for none.
local function capPolicy(cap)
  local policy = redis.call('GET', cap.policy) or cap.default
  -- 'none': NO_CAP in capPolicy.ts.
  if policy == '' or policy == 'none' then return nil end
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
  for l, count, period in string.gmatch(policy, '([^,:]+):(%d+):(%d+)') do
    local kth = times[#times - tonumber(count) + 1]
    if kth and kth + tonumber(period) > now and (not at or kth + tonumber(period) > at) then
      at = kth + tonumber(period)
      label = l
    end
  end
  return at, label
end
-- A snapshot row's phone (campaigns/schema.ts: the row starts with its line and the phone).
local function rowPhone(row)
  return row and string.match(row, '^%[%d+,"(%d+)"')
end
-- The policy of a marketing send to `phone` (a transactional campaign is not capped nor counted);
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
  return string.format('%04d-%02d-%02dT%02d:%02d:%02dZ', y, m, d,
    math.floor(rem / 3600), math.floor(rem % 3600 / 60), rem % 60)
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
-- A claim at now counts on its phone: the last N times kept, for the longest period.
local function capCount(cap, c, phone, now)
  local policy = capApplies(cap, c, phone)
  if not policy then return end
  local keep, longest = 0, 0
  for _, count, period in string.gmatch(policy, '([^,:]+):(%d+):(%d+)') do
    keep = math.max(keep, tonumber(count)); longest = math.max(longest, tonumber(period))
  end
  local times = capTimes(redis.call('GET', cap.sends .. phone))
  times[#times + 1] = tonumber(now)
  local from = math.max(1, #times - keep + 1)
  redis.call('SET', cap.sends .. phone, table.concat(times, ',', from), 'PX', longest)
end
-- A claim proved not sent: its time leaves the phone's. `claimedAt`: the claim's time, or a time
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
