--[[
  Enables a disabled webhook: its disabling is forgotten and its failures count from 0.

  KEYS[1] the webhook's hash

  Returns 1, or 0 when there is no such webhook
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[1], 'disabled_at', 'disabled_reason')
redis.call('HSET', KEYS[1], 'failures', 0)
return 1
