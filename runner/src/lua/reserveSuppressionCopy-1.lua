--[[
  KEYS: the numbers holding a copy (global). ARGV: the number, the cap. 1 when the number holds
  one or now may; 0 when the cap is reached.

  KEYS[1] the numbers holding a copy (global)
  ARGV[1] the number
  ARGV[2] the cap

  Returns 1 when the number holds a copy or may, 0 at the cap
]]
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
