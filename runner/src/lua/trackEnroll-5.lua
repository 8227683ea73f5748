--[[
  KEYS: meta, trk, due, tracking set, outbox. ARGV: id, cursor read, new cursor, first step ms,
  mode, now, then (index, message id, sent at) triples. Enrolls the sent records the cursor passed
  and moves it, unless another walker moved it first (-1).

  KEYS[1] meta
  KEYS[2] trk
  KEYS[3] due
  KEYS[4] tracking set
  KEYS[5] outbox
  ARGV[1] id
  ARGV[2] cursor read
  ARGV[3] new cursor
  ARGV[4] first step ms
  ARGV[5] mode
  ARGV[6] now (then index, message id, sent at triples)

  Returns how many enrolled, or -1 when the cursor moved
]]
--- @include "includes/settleTracking"

local meta, trk, due, set, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, first, now = ARGV[1], tonumber(ARGV[4]), ARGV[6]
if (tonumber(redis.call('HGET', meta, 't_cursor')) or 0) ~= tonumber(ARGV[2]) then return -1 end
local added = 0
-- 500 records a command each for the read, the write and the schedule, instead of four commands a
-- record (the t_open count once): Lua's unpack takes a bounded number of values.
for from = 7, #ARGV, 1500 do
  local starts, idxs = {}, {}
  for i = from, math.min(from + 1499, #ARGV), 3 do
    starts[#starts + 1] = i
    idxs[#idxs + 1] = ARGV[i]
  end
  local olds = redis.call('HMGET', trk, unpack(idxs))
  local records, dues = {}, {}
  for k, i in ipairs(starts) do
    local idx, m, t = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    local old = olds[k] and cjson.decode(olds[k])
    if not old or old.m ~= m then
      records[#records + 1] = idx
      records[#records + 1] = cjson.encode({ s = 's', k = 0, m = m, t = t, x = old and old.x or 0, o = 1 })
      dues[#dues + 1] = tonumber(t) + first
      dues[#dues + 1] = id .. ':' .. idx
      added = added + 1
    end
  end
  if #records > 0 then
    redis.call('HSET', trk, unpack(records))
    redis.call('ZADD', due, unpack(dues))
  end
end
if added > 0 then redis.call('HINCRBY', meta, 't_open', added) end
redis.call('HSET', meta, 't_cursor', ARGV[3])
if redis.call('HEXISTS', meta, 't_mode') == 0 then redis.call('HSET', meta, 't_mode', ARGV[5]) end
settleTracking(meta, set, outbox, id, now)
return added
