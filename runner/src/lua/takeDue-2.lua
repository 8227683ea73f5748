--[[
  KEYS: the campaign's waiting set, its hash. ARGV: most to take. The waiting recipients now due
  (on Redis's clock), taken out of the set, and how many wait on. Feeding them is the campaign's
  progress: the watchdog (sweep) leaves it alone while they go out.

  KEYS[1] the campaign's waiting set
  KEYS[2] its hash
  ARGV[1] most to take

  Returns { due indexes, how many wait on }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
if #due > 0 then
  redis.call('ZREM', KEYS[1], unpack(due))
  redis.call('HSET', KEYS[2], 'last_progress_at', now)
end
return { due, redis.call('ZCARD', KEYS[1]) }
