--[[
  A campaign's delivery tracking settles once the campaign ended (completed, cancelled or failed),
  the tracking walked every recipient and none is open: the campaign leaves the tracking set and,
  the first time only, `campaign.delivery_settled` is emitted with the time it settled.
  Used by trackEnroll-5.lua and trackResult-5.lua; returns 1 when it settled now, else 0.
]]
--- @include "emit"

local function settleTracking(meta, set, outbox, id, now)
  local h = redis.call('HMGET', meta, 'state', 'total', 't_cursor', 't_open', 't_settled')
  local final = h[1] == 'completed' or h[1] == 'cancelled' or h[1] == 'failed'
  local done = final and (tonumber(h[3]) or 0) >= (tonumber(h[2]) or 0) and (tonumber(h[4]) or 0) <= 0
  if not done then return 0 end
  redis.call('SREM', set, id)
  if h[5] then return 0 end
  redis.call('HSET', meta, 't_settled', now)
  emit(outbox, meta, id, 'campaign.delivery_settled', now)
  return 1
end
