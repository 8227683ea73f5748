--[[
  KEYS: meta, replies (the campaign's number's group). ARGV: index, ms.
  The first reply of a recipient is kept and counted; a later one changes nothing. A campaign that
  is gone gets nothing. Returns 1 when new, else 0.

  KEYS[1] meta
  KEYS[2] replies (the campaign's number's group)
  ARGV[1] index
  ARGV[2] ms

  Returns 1 when new, else 0
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[2], 'count', 1)
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
