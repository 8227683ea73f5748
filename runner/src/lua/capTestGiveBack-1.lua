--[[
  KEYS: the per-phone prefix. ARGV: the phone, the claim's time. A test send proved not sent gives
  its count back.

  KEYS[1] the per-phone prefix
  ARGV[1] the phone
  ARGV[2] the claim's time

  Returns 1
]]
--- @include "includes/cap"

capForget({ sends = KEYS[1] }, ARGV[1], ARGV[2])
return 1
