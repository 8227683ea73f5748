--[[
  Lua: append one event for the campaign or run whose hash is `source`. Its `events` counter
  numbers them, which makes the id: the same transition can never get two ids, and two
  transitions never share one. The hash is copied as it is at that instant (the data is the
  status then, not whatever it is when the delivery goes out).

]]
local function emit(outbox, source, id, kind, now)
  local n = redis.call('HINCRBY', source, 'events', 1)
  redis.call('RPUSH', outbox, cjson.encode({
    id = 'ev-' .. id .. '-' .. n, type = kind, at = tostring(now), hash = redis.call('HGETALL', source)
  }))
end
