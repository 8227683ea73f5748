--[[
  KEYS: meta, recipients, ledger, phones, idempotency slot, zone lists. ARGV: total the rows were
  checked
  against, rows, accepted, rejected, last line, then the JSON arrays of field/value pairs for the
  three hashes, then the lease token ('' without an Idempotency-Key), the answer and its seconds,
  then a windowed draft's zone list fields (JSON) and zone table ('' without a window), then
  the rows suppressed, then an A/B test's accepted rows per draw (JSON, '' without a test).

  KEYS[1] meta
  KEYS[2] recipients
  KEYS[3] ledger
  KEYS[4] phones
  KEYS[5] idempotency slot
  KEYS[6] zone lists
  ARGV[1] total the rows were checked against
  ARGV[2] rows
  ARGV[3] accepted
  ARGV[4] rejected
  ARGV[5] last line
  ARGV[6] recipients field/value pairs (JSON)
  ARGV[7] ledger field/value pairs (JSON)
  ARGV[8] phones field/value pairs (JSON)
  ARGV[9] lease token ('' without an Idempotency-Key)
  ARGV[10] the answer
  ARGV[11] its seconds
  ARGV[12] zone list fields (JSON)
  ARGV[13] zone table ('' without a window)
  ARGV[14] rows suppressed
  ARGV[15] an A/B test's accepted rows per draw, [remainder, variant 1, …] (JSON), or ''

  With a key, the answer is kept in the same step as the rows.

  Returns 'ok', 'missing', 'not_draft', 'moved' (another chunk landed: check again) or 'lease_lost'
]]
local meta, rcp, ledger, phones, slot = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token = ARGV[9]
if token ~= '' and redis.call('GET', slot) ~= token then return 'lease_lost' end
local state = redis.call('HGET', meta, 'state')
if not state then return 'missing' end
if state ~= 'draft' then return 'not_draft' end
if tonumber(redis.call('HGET', meta, 'total')) ~= tonumber(ARGV[1]) then return 'moved' end
local function hsetAll(key, list)
  for i = 1, #list, 1000 do redis.call('HSET', key, unpack(list, i, math.min(i + 999, #list))) end
end
hsetAll(rcp, cjson.decode(ARGV[6])); hsetAll(ledger, cjson.decode(ARGV[7])); hsetAll(phones, cjson.decode(ARGV[8]))
-- A windowed draft: its zones' new chunks of indexes (keys.zoneIndexes) and its zone table.
if ARGV[13] ~= '' then hsetAll(KEYS[6], cjson.decode(ARGV[12])); redis.call('HSET', meta, 'zones', ARGV[13]) end
redis.call('HINCRBY', meta, 'total', tonumber(ARGV[2]))
redis.call('HINCRBY', meta, 'n_p', tonumber(ARGV[3]))
redis.call('HINCRBY', meta, 'n_r', tonumber(ARGV[4]))
redis.call('HINCRBY', meta, 'n_z', tonumber(ARGV[14]))
-- An A/B test's split grows with its rows (campaigns/abTest.ts reads ab_n<draw>).
if (ARGV[15] or '') ~= '' then
  for draw, n in ipairs(cjson.decode(ARGV[15])) do redis.call('HINCRBY', meta, 'ab_n' .. (draw - 1), n) end
end
if tonumber(ARGV[5]) > (tonumber(redis.call('HGET', meta, 'last_line')) or 0) then
  redis.call('HSET', meta, 'last_line', ARGV[5])
end
local expires = redis.call('HGET', meta, 'expires_at')
if expires then
  for _, key in ipairs({ rcp, ledger, phones, KEYS[6] }) do redis.call('PEXPIREAT', key, expires) end
end
if token ~= '' then redis.call('SET', slot, ARGV[10], 'EX', ARGV[11]) end
return 'ok'
