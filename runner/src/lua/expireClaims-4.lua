--[[
  KEYS: meta, ledger, running, outbox. ARGV: older-than timestamp, now, campaign id, then indexes.
  Claims last touched before the timestamp belong to attempts that are gone: unknown.

  KEYS[1] meta
  KEYS[2] ledger
  KEYS[3] running
  KEYS[4] outbox
  ARGV[1] older-than timestamp
  ARGV[2] now
  ARGV[3] campaign id (then indexes)

  Returns how many claims turned unknown
]]
--- @include "includes/ledgerRecords"

local meta, ledger, running, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local before, now, id = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local moved = 0
for i = 4, #ARGV do
  local rec = redis.call('HGET', ledger, ARGV[i])
  if rec then
    local r = parse(rec)
    if r.s == 'c' and (tonumber(r.l) or 0) < before then
      r.s = 'u'; r.err = 'the attempt that claimed this send stopped answering before it settled (crash or stall)'
      write(ledger, ARGV[i], r); move(meta, 'c', 'u'); moved = moved + 1
    end
  end
end
finishIfDone(meta, running, outbox, id, now)
return moved
