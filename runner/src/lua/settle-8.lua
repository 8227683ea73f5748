--[[

  KEYS[1] meta
  KEYS[2] ledger
  KEYS[3] running
  KEYS[4] outbox
  KEYS[5] ticks
  KEYS[6] the campaign's snapshot
  KEYS[7] the cap's per-phone prefix
  KEYS[8] the number's daily counts
  ARGV[1] index
  ARGV[2] token
  ARGV[3] outcome letter
  ARGV[4] now
  ARGV[5] ref
  ARGV[6] error
  ARGV[7] pauseAfter
  ARGV[8] campaign id
  ARGV[9] counter ('' or a field to add 1 to)

  Returns 'ok', 'lost', or the campaign's new state
]]
--- @include "includes/ledgerRecords"
--- @include "includes/cap"
--- @include "includes/settleRecord"

return settle(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
  tonumber(ARGV[7]), ARGV[8], ARGV[9], { recipients = KEYS[6], sends = KEYS[7] }, KEYS[8])
