--[[
  KEYS: meta, running, finishing, outbox, recipients, ledger, phones (the campaign's number's
  group).
  ARGV: id, now, to, allowed states as ",a,b,", event type or "", ending "1"/"0", then field/value
  pairs.

  KEYS[1] meta
  KEYS[2] running
  KEYS[3] finishing
  KEYS[4] outbox
  KEYS[5] recipients
  KEYS[6] ledger
  KEYS[7] phones (the campaign's number's group)
  ARGV[1] id
  ARGV[2] now
  ARGV[3] to
  ARGV[4] allowed states as ',a,b,'
  ARGV[5] event type or ''
  ARGV[6] ending '1'/'0' (then field/value pairs)

  Returns 'ok:<previous state>', 'no:<state>' (not allowed from there) or 'missing'
]]
--- @include "includes/emit"

local meta, running, finishing, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local rcp, ledger, phones = KEYS[5], KEYS[6], KEYS[7]
local id, now, to, allowed, event, ending = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local state = redis.call('HGET', meta, 'state')
if not state then return 'missing' end
if not string.find(allowed, ',' .. state .. ',', 1, true) then return 'no:' .. state end
if ending == '1' then redis.call('SADD', finishing, id) end
redis.call('HSET', meta, 'state', to)
for i = 7, #ARGV, 2 do redis.call('HSET', meta, ARGV[i], ARGV[i + 1]) end
if to == 'running' then redis.call('SADD', running, id) else redis.call('SREM', running, id) end
if state == 'draft' then
  -- No longer a draft: its rows stay for good, and its phone index with them (a reply finds its
  -- recipient there: tracking/attribution.ts). The global drafts list is another group:
  -- transition() takes it out after this step.
  redis.call('PERSIST', meta); redis.call('PERSIST', rcp); redis.call('PERSIST', ledger); redis.call('PERSIST', phones)
end
if event ~= '' then emit(outbox, meta, id, event, now) end
return 'ok:' .. state
