--[[
  KEYS: meta, ledger, running, outbox, ticks, then the campaign's snapshot and the cap's per-phone
  prefix (audience/cap.ts), and the number's daily counts (audience/dailyCounts.ts). ARGV: index, token, outcome
  letter, now, ref, error, pauseAfter,
  campaign id, counter ('' or a campaign field to add 1 to: holds, retries). Settles a claim this
  attempt holds; one proved not sent (pending again, failed, not_sent) gives its count on the
  phone's frequency cap back. An attempt that finds its claim
  turned 'unknown' by a sweep may still prove it 'sent' (it holds the token); nothing else may.
  Returns 'ok', 'lost', or the campaign's new state when this settle changed it ('completed',
  'paused'), so the process that caused the change logs it. `settleSent` settles a volley of sends
  the same way, its counters written once.

]]
-- A number's sends and refusals per day (audience/dailyCounts.ts): fields `<day>:s` and `<day>:f`, the
-- day counted from the epoch on the settling process's clock (UTC). A day's first count drops the
-- fields of days before the last DAILY_DAYS: once a day, so the hash never holds more than
-- 2 × DAILY_DAYS fields, and it expires when the number stops sending.
local DAILY_DAYS = 8
local function countDaily(daily, to, now, n)
  if to ~= 's' and to ~= 'f' then return end
  local day = math.floor(tonumber(now) / 86400000)
  if redis.call('HINCRBY', daily, day .. ':' .. to, n) > n then return end
  for _, field in ipairs(redis.call('HKEYS', daily)) do
    local fieldDay = tonumber(string.match(field, '^(%d+):'))
    if fieldDay and fieldDay <= day - DAILY_DAYS then redis.call('HDEL', daily, field) end
  end
  redis.call('EXPIRE', daily, DAILY_DAYS * 86400)
end
-- n sends in the second of `now` (the status's rate). The second's first send drops the one ten
-- minutes old and keeps the hash alive: once a second, not per send.
local function countTicks(ticks, now, n)
  local second = math.floor(tonumber(now) / 1000)
  if redis.call('HINCRBY', ticks, second, n) == n then
    redis.call('HDEL', ticks, second - 600)
    redis.call('EXPIRE', ticks, 660)
  end
end
-- What a send writes on its campaign: its progress, the failure streak reset, when the send (the
-- last of a volley) was claimed for the blocked streak (settleBlocked-7.lua), and the end of a wait
-- for the daily limit (audience/budget.ts) the status shows. One write: one command per send less.
local function noteSent(meta, now, claimedAt)
  redis.call('HSET', meta, 'last_progress_at', now, 'failure_streak', 0, 'sent_claimed_at', claimedAt,
    'budget_next_at', '')
end
local function settle(meta, ledger, running, outbox, ticks, idx, token, to, now, ref, err, pauseAfter, id, counter,
  cap, daily)
local rec = redis.call('HGET', ledger, idx)
if not rec then return 'lost' end
local r = parse(rec)
if r.ref ~= token or not (r.s == 'c' or (r.s == 'u' and to == 's')) then return 'lost' end
local from, claimedAt = r.s, r.l
if from == 'c' and (to == 'p' or to == 'f' or to == 'n') then capGiveBack(cap, meta, idx, r.l) end
r.s = to; r.l = now; r.err = err
if to == 's' then r.ref = ref elseif to == 'p' then r.ref = '' end
write(ledger, idx, r)
local claimedLeft = move(meta, from, to)
if to == 's' then
  noteSent(meta, now, claimedAt)
else
  redis.call('HSET', meta, 'last_progress_at', now)
end
-- A resume's re-check (sending/refusals.ts): any answer but a refusal ends it; a send back to
-- pending (a 5xx, a 429) leaves it open for the next start.
if redis.call('HEXISTS', meta, 'recheck') == 1 then
  if to == 'p' then redis.call('HSET', meta, 'recheck', '1') else redis.call('HDEL', meta, 'recheck') end
end
if counter ~= '' then redis.call('HINCRBY', meta, counter, 1) end
countDaily(daily, to, now, 1)
if to == 's' then countTicks(ticks, now, 1) end
if to == 'f' then
  local streak = redis.call('HINCRBY', meta, 'failure_streak', 1)
  local state = redis.call('HGET', meta, 'state')
  -- A stopped campaign keeps the reason it stopped; sends that were in flight do not overwrite it.
  if state == 'running' then redis.call('HSET', meta, 'last_error', err) end
  if streak >= pauseAfter and state == 'running' then
    redis.call('HSET', meta, 'state', 'paused', 'paused_reason', 'failures', 'paused_message', '',
      'last_error', 'paused itself after ' .. streak .. ' failed recipients in a row; last: ' .. err)
    redis.call('SREM', running, id)
    emit(outbox, meta, id, 'campaign.paused', now)
    return 'paused'
  end
end
-- Another claim still open, or this recipient pending again:
-- nothing to finish, and no read of the counters to learn it.
if (from == 'c' and claimedLeft and claimedLeft > 0) or to == 'p' then return 'ok' end
if finishIfDone(meta, running, outbox, id, now) then return 'completed' end
return 'ok'
end
-- A volley whose every answer is `sent` (refs: index -> message id), settled as `settle` settles each
-- in turn, with the records read and written in one command each and the campaign's counts,
-- progress, daily count and ticks written once for the volley instead of once per recipient. Only
-- sends: a failure's streak depends on the order of the answers. Returns 'ok', 'lost' (any claim lost) or 'completed'.
local function settleSent(meta, ledger, running, outbox, ticks, idxs, refs, token, now, id, daily)
  local fromClaimed, fromUnknown, claimedAt, answer = 0, 0, nil, 'ok'
  local recs, writes = redis.call('HMGET', ledger, unpack(idxs)), {}
  for k, idx in ipairs(idxs) do
    local r = recs[k] and parse(recs[k])
    if not r or r.ref ~= token or not (r.s == 'c' or r.s == 'u') then
      answer = 'lost'
    else
      if r.s == 'c' then fromClaimed = fromClaimed + 1 else fromUnknown = fromUnknown + 1 end
      claimedAt = r.l
      r.s = 's'; r.l = now; r.err = ''; r.ref = refs[idx]
      writes[#writes + 1] = idx
      writes[#writes + 1] = encode(r)
    end
  end
  local sent = fromClaimed + fromUnknown
  if sent == 0 then return answer end
  redis.call('HSET', ledger, unpack(writes))
  local claimedLeft = fromClaimed > 0 and redis.call('HINCRBY', meta, 'n_c', -fromClaimed)
  if fromUnknown > 0 then redis.call('HINCRBY', meta, 'n_u', -fromUnknown) end
  redis.call('HINCRBY', meta, 'n_s', sent)
  noteSent(meta, now, claimedAt)
  if redis.call('HEXISTS', meta, 'recheck') == 1 then redis.call('HDEL', meta, 'recheck') end
  countDaily(daily, 's', now, sent)
  countTicks(ticks, now, sent)
  if fromUnknown == 0 and claimedLeft > 0 then return answer end
  if finishIfDone(meta, running, outbox, id, now) then return 'completed' end
  return answer
end
