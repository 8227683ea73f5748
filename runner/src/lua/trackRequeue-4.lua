--[[
  KEYS: meta, trk, ledger, tracking set. ARGV: now, then (index, message id) pairs. Requeues
  recipients whose delivery failed: only while the tracking record is failed and never requeued,
  and the ledger still holds that very message as sent; the ledger record goes back to pending (as
  retry-not-sent's move does) and the tracking record is marked, so a second retry finds nothing.

  KEYS[1] meta
  KEYS[2] trk
  KEYS[3] ledger
  KEYS[4] tracking set

  Returns how many were requeued
]]
--- @include "includes/jobClaim"

local meta, trk, ledger, set = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local moved = 0
for i = 2, #ARGV, 2 do
  local idx, m = ARGV[i], ARGV[i + 1]
  local rec = redis.call('HGET', trk, idx)
  if rec then
    local r = cjson.decode(rec)
    local lrec = redis.call('HGET', ledger, idx)
    if r.s == 'f' and r.m == m and (r.x or 0) == 0 and lrec then
      local l = parse(lrec)
      if l.s == 's' and l.ref == m then
        l.s = 'p'; l.ref = ''
        write(ledger, idx, l); move(meta, 's', 'p')
        redis.call('HINCRBY', meta, 't_failed', -1)
        redis.call('HINCRBY', meta, 't_fr:' .. (r.e or ''), -1)
        redis.call('HINCRBY', meta, 't_requeued', 1)
        r.s = 'q'; r.x = 1; r.o = 0
        redis.call('HSET', trk, idx, cjson.encode(r))
        moved = moved + 1
      end
    end
  end
end
if moved > 0 then
  redis.call('HSET', meta, 't_cursor', 0)
  redis.call('SADD', set, redis.call('HGET', meta, 'id'))
end
return moved
