--[[
  KEYS: meta, ledger, running, outbox, recipients. ARGV: index, token, now, campaign id, start
  taken "1"/"0". Returns { 'claimed', the recipient's snapshot row } (the send needs no second
  read), or { 'inactive' } (campaign not running, or no start taken: leave pending), { 'final' },
  { 'missing' }, or { 'unknown' } (a claim left by an attempt that never settled: it may have
  sent, so never resend).

  KEYS[1] meta
  KEYS[2] ledger
  KEYS[3] running
  KEYS[4] outbox
  KEYS[5] recipients
  ARGV[1] index
  ARGV[2] token
  ARGV[3] now
  ARGV[4] campaign id
  ARGV[5] start taken "1"/"0"

  Returns { 'claimed', row }, { 'inactive' }, { 'final' }, { 'missing' } or { 'unknown' }
]]
--- @include "includes/ledgerRecords"

local meta, ledger, running, outbox, recipients = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local idx, token, now, id, started = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local rec = redis.call('HGET', ledger, idx)
if not rec then return { 'missing' } end
local r = parse(rec)
if r.s == 'c' then
  if r.ref == token then return { 'claimed', redis.call('HGET', recipients, idx) } end
  r.s = 'u'; r.err = 'an earlier attempt claimed this send and never settled it (crash or stall)'
  write(ledger, idx, r); move(meta, 'c', 'u')
  finishIfDone(meta, running, outbox, id, now)
  return { 'unknown' }
end
if r.s ~= 'p' then return { 'final' } end
if started ~= '1' or redis.call('HGET', meta, 'state') ~= 'running' then return { 'inactive' } end
r.s = 'c'; r.a = r.a + 1; if r.f == '' then r.f = now end; r.l = now; r.ref = token; r.err = ''
write(ledger, idx, r); move(meta, 'p', 'c')
return { 'claimed', redis.call('HGET', recipients, idx) }
