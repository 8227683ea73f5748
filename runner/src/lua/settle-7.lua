--[[


  KEYS[1] 
  KEYS[2] 
  KEYS[3] 
  KEYS[4] 
  KEYS[5] 
  KEYS[6] 
  KEYS[7] 
  ARGV[1] 
  ARGV[2] 
  ARGV[3] 
  ARGV[4] 
  ARGV[5] 
  ARGV[6] 
  ARGV[7] 
  ARGV[8] 
  ARGV[9] 

  Returns 
]]
--- @include "includes/ledgerRecords"
--- @include "includes/cap"
--- @include "includes/settleRecord"

return settle(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9], { recipients = KEYS[6], sends = KEYS[7] })
