--[[
  KEYS: the sorted set. ARGV: max, member, score. -1 when the member has its place (or had it), else
  the count that is full.

  KEYS[1] the sorted set
  ARGV[1] max
  ARGV[2] member
  ARGV[3] score

  Returns -1 when the member has its place, else the count that is full
]]
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return -1 end
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[1]) then return n end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return -1
