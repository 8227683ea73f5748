--[[
  KEYS (all in the number's group): meta, recipients, ledger, phones, staged recipients, staged
  ledger, staged phones, running, unlisted, outbox, idempotency slot, staged zone lists, zone lists.
  ARGV: id, now, state, rows, draft expiry or '', answer, lease token or '', answer seconds, then
  field/value pairs of the campaign hash.
  The one step that makes a campaign exist: its rows move into place (RENAME), its hash, the
  number's running set (what the feeder walks), a draft's expiry, campaign.finished for a campaign
  born finished, the Idempotency-Key's answer, and its entry in `unlisted` until it is listed
  (keyGroups.ts: the global list is another group). Returns 'ok', 'exists' (a schedule's firing created it
  already), 'expired' (the staged rows are gone) or 'lease_lost' (another request holds the key
  now).

  KEYS[1] meta
  KEYS[2] recipients
  KEYS[3] ledger
  KEYS[4] phones
  KEYS[5] staged recipients
  KEYS[6] staged ledger
  KEYS[7] staged phones
  KEYS[8] running
  KEYS[9] unlisted
  KEYS[10] outbox
  KEYS[11] idempotency slot
  KEYS[12] staged zone lists
  KEYS[13] zone lists
  ARGV[1] id
  ARGV[2] now
  ARGV[3] state
  ARGV[4] rows
  ARGV[5] draft expiry or ''
  ARGV[6] the answer
  ARGV[7] lease token or ''
  ARGV[8] answer seconds (then field/value pairs of the campaign hash)

  Returns 'ok', 'exists', 'expired' or 'lease_lost'
]]
--- @include "includes/emit"

local meta, rcp, ledger, phones, srcp, sledger, sphones = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local running, unlisted, outbox, slot = KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local id, now, state, rows, expires = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local answer, token, keep = ARGV[6], ARGV[7], ARGV[8]
local function drop() redis.call('UNLINK', srcp, sledger, sphones, KEYS[12]) end
if token ~= '' and redis.call('GET', slot) ~= token then drop() return 'lease_lost' end
if redis.call('EXISTS', meta) == 1 then drop() return 'exists' end
if rows > 0 then
  if redis.call('EXISTS', srcp) == 0 or redis.call('EXISTS', sledger) == 0 then drop() return 'expired' end
  redis.call('RENAME', srcp, rcp)
  redis.call('RENAME', sledger, ledger)
  -- The staged phone index found the repeats; it is kept: a draft's later chunks are checked against
  -- it, and a reply finds its recipient in it (tracking/attribution.ts).
  if redis.call('EXISTS', sphones) == 1 then redis.call('RENAME', sphones, phones) end
  -- A windowed campaign's per-zone lists (keys.zoneIndexes).
  if redis.call('EXISTS', KEYS[12]) == 1 then
    redis.call('RENAME', KEYS[12], KEYS[13])
    redis.call('PERSIST', KEYS[13])
  end
end
for i = 9, #ARGV, 2 do redis.call('HSET', meta, ARGV[i], ARGV[i + 1]) end
if expires ~= '' then
  for _, key in ipairs({ meta, rcp, ledger, phones, KEYS[13] }) do redis.call('PEXPIREAT', key, expires) end
else
  redis.call('PERSIST', rcp)
  redis.call('PERSIST', ledger)
  redis.call('PERSIST', phones)
end
redis.call('ZADD', unlisted, now, id)
if state == 'running' then redis.call('SADD', running, id) end
if state == 'completed' then emit(outbox, meta, id, 'campaign.finished', now) end
if token ~= '' then redis.call('SET', slot, answer, 'EX', keep) end
return 'ok'
