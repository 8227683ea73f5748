--[[
  KEYS: meta, ledger, running, outbox, the campaign's snapshot, the cap's per-phone prefix. ARGV:
  index, to letter ('s' or 'n'), message id, error, now, id. Resolves one unknown recipient from
  the service's records (reconcile); one proved not sent gives its count on the frequency cap back.

  KEYS[1] meta
  KEYS[2] ledger
  KEYS[3] running
  KEYS[4] outbox
  KEYS[5] the campaign's snapshot
  KEYS[6] the cap's per-phone prefix
  ARGV[1] index
  ARGV[2] to letter ('s' or 'n')
  ARGV[3] message id
  ARGV[4] error
  ARGV[5] now
  ARGV[6] id

  Returns 1 when resolved, else 0
]]
--- @include "includes/ledgerRecords"
--- @include "includes/cap"

local meta, ledger, running, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local idx, to, ref, err, now, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local rec = redis.call('HGET', ledger, idx)
if not rec then return 0 end
local r = parse(rec)
if r.s ~= 'u' then return 0 end
if to == 'n' then capGiveBack({ recipients = KEYS[5], sends = KEYS[6] }, meta, idx, r.l) end
r.s = to; r.err = err; if to == 's' then r.ref = ref end
write(ledger, idx, r); move(meta, 'u', to)
finishIfDone(meta, running, outbox, id, now)
return 1
