--[[
  KEYS: the sorted set. ARGV: max, member, score. -1 when the member has its place (or had it), else the count that is full.

  KEYS[1] 
  ARGV[1] 
  ARGV[2] 
  ARGV[3] 

  Returns 
]]
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return -1 end
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[1]) then return n end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return -1
