--[[
  KEYS: the webhook's hash. ARGV: attempts in a row that disable it, now, reason. Counts one more
  failed attempt (never recreating a removed webhook); 1 when this attempt disabled it.

  KEYS[1] 
  ARGV[1] 
  ARGV[2] 
  ARGV[3] 

  Returns 
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
if n >= tonumber(ARGV[1]) and not redis.call('HGET', KEYS[1], 'disabled_at') then
  redis.call('HSET', KEYS[1], 'disabled_at', ARGV[2], 'disabled_reason', ARGV[3])
  return 1
end
return 0
