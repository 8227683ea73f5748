--[[
  KEYS: a number's copy and its version (the number's group); a number without the version holds
  no copy, and nothing is written to it. The version says the copy holds every change up to it,
  except phones changed again after it (which a repair replays). Modes (ARGV[1]):
    change, after, last, phone/note pairs ('' removes): one change, written only when the copy is
      at `after`, which moves it to `last` ('ok'); 'done' when the copy is past it already; 'gap'
      when a change before it has not reached the copy (a crash, or a delivery at the same moment):
      the caller then repairs.
    replay, target, pairs: a repair's page, read from the list after `target` was: written unless
      the copy is past `target` already ('ahead': a change newer than the page reached it).
    finish, base, target: a repair's end, moving the copy from `base` to `target`; 'moved' when
      something moved it meanwhile (the repair goes again from there).

  KEYS[1] the number's copy
  KEYS[2] its version
  ARGV[1] mode: 'change', 'replay' or 'finish'
  ARGV[2] change: after; replay: target; finish: base
  ARGV[3] change: last; finish: target (then phone/note pairs for change and replay)

  Returns 'ok', 'done', 'gap', 'ahead' or 'moved' (above)
]]
local copy, at = KEYS[1], KEYS[2]
local v = redis.call('GET', at)
if not v then return 'none' end
v = tonumber(v)
local mode = ARGV[1]
local from
if mode == 'change' then
  if v >= tonumber(ARGV[3]) then return 'done' end
  if v ~= tonumber(ARGV[2]) then return 'gap' end
  from = 4
elseif mode == 'replay' then
  if v > tonumber(ARGV[2]) then return 'ahead' end
  from = 3
else
  if v ~= tonumber(ARGV[2]) then return 'moved' end
  redis.call('SET', at, ARGV[3])
  return 'ok'
end
for i = from, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', copy, ARGV[i]) else redis.call('HSET', copy, ARGV[i], ARGV[i + 1]) end
end
if mode == 'change' then redis.call('SET', at, ARGV[3]) end
return 'ok'
