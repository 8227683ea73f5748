--[[
  KEYS: meta, trk, due, tracking set, outbox. ARGV: id, index, message id, step claimed, new state
  letter ('' when the check told nothing new), now, error, next due ('' when no check remains), and
  '1' when the service did not answer and the same step is asked again at next due.
  The check's result, its counters and its next due time in one step; a result whose record moved
  on meanwhile (another check wrote it, a retry requeued it) is dropped.

  KEYS[1] meta
  KEYS[2] trk
  KEYS[3] due
  KEYS[4] tracking set
  KEYS[5] outbox
  ARGV[1] id
  ARGV[2] index
  ARGV[3] message id
  ARGV[4] step claimed
  ARGV[5] new state letter ('' when the check told nothing new)
  ARGV[6] now
  ARGV[7] error
  ARGV[8] next due ('' when no check remains)
  ARGV[9] '1': unanswered, the step asked again (r.u counts it), else ''

  Returns 1 when written, 0 when dropped
]]
--- @include "includes/settleTracking"

local meta, trk, due, set, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, idx, m, k = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local to, now, err, nextDue = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local member = id .. ':' .. idx
local rec = redis.call('HGET', trk, idx)
if not rec then redis.call('ZREM', due, member) return 0 end
local r = cjson.decode(rec)
if r.m ~= m or r.o ~= 1 or r.k ~= k then return 0 end
local rank = { s = 0, d = 1, r = 2, f = 3 }
if to ~= '' and to ~= r.s and r.s ~= 'r' and r.s ~= 'f' and (to == 'f' or rank[to] > rank[r.s]) then
  if to == 'f' then
    r.f = now; r.e = err
    redis.call('HINCRBY', meta, 't_failed', 1)
    redis.call('HINCRBY', meta, 't_fr:' .. err, 1)
    if r.s == 'd' then redis.call('HINCRBY', meta, 't_delivered', -1) end
  else
    if r.s == 's' then r.d = now; redis.call('HINCRBY', meta, 't_delivered', 1) end
    if to == 'r' then r.r = now; redis.call('HINCRBY', meta, 't_read', 1) end
  end
  r.s = to
end
if ARGV[9] == '1' then
  r.u = (r.u or 0) + 1
else
  r.k = k + 1; r.u = nil
end
if r.s == 'r' or r.s == 'f' or nextDue == '' then
  r.o = 0
  redis.call('ZREM', due, member)
  redis.call('HINCRBY', meta, 't_open', -1)
else
  redis.call('ZADD', due, tonumber(nextDue), member)
end
redis.call('HSET', trk, idx, cjson.encode(r))
settleTracking(meta, set, outbox, id, now)
return 1
