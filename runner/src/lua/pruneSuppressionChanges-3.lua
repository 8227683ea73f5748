--[[
  KEYS: changed, entries, pruned (the global group). ARGV: the version every copy holds every
  change up to, how many changes to look at. Takes out of `changed` the phones no longer listed
  whose last change is at or below that version, from where the last call stopped (`pruned`):
  every copy has applied those removals, and a new copy replays only what is listed. A phone
  listed again later takes a new version and is looked at again then.

  KEYS[1] changed
  KEYS[2] entries
  KEYS[3] pruned: the version changed was looked at up to
  ARGV[1] the version every copy holds every change up to
  ARGV[2] how many changes to look at in this call

  Returns { phones taken out, 1 when it reached the version (else call again) }
]]
local changed, entries, pruned = KEYS[1], KEYS[2], KEYS[3]
local upTo = tonumber(ARGV[1])
local from = tonumber(redis.call('GET', pruned) or '0')
if upTo <= from then return { 0, 1 } end
local page = redis.call('ZRANGEBYSCORE', changed, '(' .. from, upTo, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local removed = 0
for i = 1, #page, 2 do
  if redis.call('HEXISTS', entries, page[i]) == 0 then
    redis.call('ZREM', changed, page[i])
    removed = removed + 1
  end
end
local whole = #page < 2 * tonumber(ARGV[2])
redis.call('SET', pruned, whole and upTo or page[#page])
return { removed, whole and 1 or 0 }
