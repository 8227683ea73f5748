--[[
  KEYS: the receipts set. ARGV: the receipt (webhook id:event id), how long one is kept (ms), the
  cap. Drops receipts past their time; -1 when this one is held, else it is added, the oldest
  dropped first while the set is full, and the answer is how many were dropped for it.

  KEYS[1] the receipts set
  ARGV[1] the receipt (webhook id:event id)
  ARGV[2] how long one is kept (ms)
  ARGV[3] the cap

  Returns -1 when held already, else how many were dropped for it
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then redis.call('ZPOPMIN', KEYS[1], over) else over = 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return over
