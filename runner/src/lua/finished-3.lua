--[[
  KEYS: finishing, meta, outbox. ARGV: id, now. An ended campaign whose recipients are all final
  (none pending, no send in flight): the one process whose SREM removes it from `finishing`
  reports campaign.finished, with the final counts. While one is open it stays in `finishing`,
  and the feeder asks again at its next tick.

  KEYS[1] finishing
  KEYS[2] meta
  KEYS[3] outbox
  ARGV[1] id
  ARGV[2] now

  Returns 1 when this call reported it finished, else 0
]]
--- @include "includes/emit"

local open = redis.call('HMGET', KEYS[2], 'n_p', 'n_c')
if (tonumber(open[1]) or 0) + (tonumber(open[2]) or 0) > 0 then return 0 end
if redis.call('SREM', KEYS[1], ARGV[1]) == 1 and redis.call('EXISTS', KEYS[2]) == 1 then
  emit(KEYS[3], KEYS[2], ARGV[1], 'campaign.finished', ARGV[2])
  return 1
end
return 0
