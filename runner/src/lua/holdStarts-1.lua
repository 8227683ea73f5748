--[[
  KEYS: spacing hash. ARGV: milliseconds. Nothing from the number starts before then (a 429's
  Retry-After); `held` keeps the time, so a restart (restartSpacing-1.lua) does not start sooner.

  KEYS[1] spacing hash
  ARGV[1] milliseconds

  Returns 1
]]
local time = redis.call('TIME')
local holdUntil = tonumber(time[1]) * 1000000 + tonumber(time[2]) + tonumber(ARGV[1]) * 1000
if holdUntil > tonumber(redis.call('HGET', KEYS[1], 'next') or '0') then
  redis.call('HSET', KEYS[1], 'next', string.format("%.0f", holdUntil))
end
if holdUntil > tonumber(redis.call('HGET', KEYS[1], 'held') or '0') then
  redis.call('HSET', KEYS[1], 'held', string.format("%.0f", holdUntil))
end
return 1
