--[[
  Milliseconds left in the period when the address has reached the limit, else 0.

  KEYS[1] the address's failure count
  ARGV[1] failures that start the wait

  Returns milliseconds left to wait, or 0
]]
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n < tonumber(ARGV[1]) then return 0 end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then return 0 end
return left
