--[[
  A delivered event: the webhook's count of failures in a row starts again (a removed webhook is
  not recreated).

  KEYS[1] the webhook's hash

  Returns 1
]]
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'failures', 0) end
return 1
