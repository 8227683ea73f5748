--[[
  KEYS: due. ARGV: now, how many, lease ms. Claims due checks: each is due again after the lease
  unless its result is written.

  KEYS[1] due
  ARGV[1] now
  ARGV[2] how many
  ARGV[3] lease ms

  Returns the due checks claimed
]]
local items = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, item in ipairs(items) do redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[3]), item) end
return items
