--[[
  KEYS: the webhook's hash. ARGV: attempts in a row that disable it, now, reason. Counts one more
  failed attempt (never recreating a removed webhook); 1 when this attempt disabled it.

  KEYS[1] the webhook's hash
  ARGV[1] attempts in a row that disable it
  ARGV[2] now
  ARGV[3] reason

  Returns 1 when this attempt disabled the webhook, else 0
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
if n >= tonumber(ARGV[1]) and not redis.call('HGET', KEYS[1], 'disabled_at') then
  redis.call('HSET', KEYS[1], 'disabled_at', ARGV[2], 'disabled_reason', ARGV[3])
  return 1
end
return 0
