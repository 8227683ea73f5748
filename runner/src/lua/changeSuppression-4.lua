--[[
  KEYS: entries, listed, changed, version (the global group). ARGV: 'add' or 'remove', the list's
  cap, then phones (add: phone, its time in ms, its stored entry, and so on). Adds the phones not
  listed yet while the list holds fewer than the cap; a phone listed by a keyword takes the new
  entry (an operator's, a workflow's or an import's outlives a START); any other keeps its entry.
  Removes those listed. Each change takes the next version. Returns { first version, last
  version, phones refused as the list was full, then for each change its phone and its stored
  entry ('' for a removal) }; the versions are 0 when nothing changed.

  KEYS[1] entries
  KEYS[2] listed
  KEYS[3] changed
  KEYS[4] version (the global group)
  ARGV[1] 'add' or 'remove'
  ARGV[2] the list's cap (then the phones, as above)

  Returns { first version, last version, refused, phone, entry, ... }
]]
--- @include "includes/suppressionStored"

local entries, listed, changed, version = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local add = ARGV[1] == 'add'
local max = tonumber(ARGV[2])
local step = add and 3 or 1
local out = {}
local full = 0
local count = redis.call('ZCARD', listed)
for i = 3, #ARGV, step do
  local phone = ARGV[i]
  if add then
    local had = redis.call('HGET', entries, phone)
    if (not had and count < max) or isKeyword(had) then
      if not had then count = count + 1 end
      redis.call('HSET', entries, phone, ARGV[i + 2])
      redis.call('ZADD', listed, ARGV[i + 1], phone)
      out[#out + 1] = phone; out[#out + 1] = ARGV[i + 2]
    elseif not had then
      full = full + 1
    end
  elseif redis.call('HDEL', entries, phone) == 1 then
    redis.call('ZREM', listed, phone)
    out[#out + 1] = phone; out[#out + 1] = ''
  end
end
if #out == 0 then return { 0, 0, full } end
local last = redis.call('INCRBY', version, #out / 2)
local first = last - #out / 2 + 1
for i = 1, #out, 2 do redis.call('ZADD', changed, first + (i - 1) / 2, out[i]) end
return { first, last, full, unpack(out) }
