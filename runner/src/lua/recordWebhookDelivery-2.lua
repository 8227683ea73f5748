--[[
  Notes a delivery attempt in the webhook's list of recent ones, newest first, keeping the last
  ARGV[2]; a removed webhook's list is not made again.

  KEYS[1] the webhook's hash
  KEYS[2] its list of recent deliveries
  ARGV[1] the attempt, as JSON
  ARGV[2] how many the list keeps

  Returns 1, or 0 when there is no such webhook
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
return 1
