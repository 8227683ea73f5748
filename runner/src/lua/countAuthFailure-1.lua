--[[
  Counts a failure; the period starts with the first one. Returns the count.

  KEYS[1] the address's failure count
  ARGV[1] the period, ms

  Returns the count
]]
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
