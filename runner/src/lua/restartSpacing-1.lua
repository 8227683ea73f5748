--[[
  KEYS: spacing hash. Brings the number's clock back to now (or to the end of a 429's hold): the
  places it had handed out ahead belong to sends that will take none. Returns microseconds given
  back.

  KEYS[1] spacing hash

  Returns microseconds given back
]]
local time = redis.call('TIME')
local from = math.max(tonumber(time[1]) * 1000000 + tonumber(time[2]),
  tonumber(redis.call('HGET', KEYS[1], 'held') or '0'))
local nextAt = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
if nextAt <= from then return 0 end
redis.call('HSET', KEYS[1], 'next', string.format('%.0f', from))
return math.floor(nextAt - from)
