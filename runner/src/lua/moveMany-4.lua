--[[
  KEYS: meta, ledger, running, outbox. ARGV: from letter, to letter, now, error, campaign id, then
  indexes.
  Moves each listed record that is in state `from`. Returns how many moved.

  KEYS[1] meta
  KEYS[2] ledger
  KEYS[3] running
  KEYS[4] outbox
  ARGV[1] from letter
  ARGV[2] to letter
  ARGV[3] now
  ARGV[4] error
  ARGV[5] campaign id (then indexes)

  Returns how many moved
]]
--- @include "includes/ledgerRecords"

local meta, ledger, running, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local from, to, now, err, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local moved = 0
for i = 6, #ARGV do
  local rec = redis.call('HGET', ledger, ARGV[i])
  if rec then
    local r = parse(rec)
    if r.s == from then
      r.s = to
      if err ~= '' then r.err = err end
      if to == 'p' then r.ref = '' end
      write(ledger, ARGV[i], r); move(meta, from, to); moved = moved + 1
    end
  end
end
finishIfDone(meta, running, outbox, id, now)
return moved
