--[[
  Benchmark 12: the frequency cap's count (the runner's capCount, what each claim runs) for each
  recipient of a range of the snapshot.

  KEYS[1] the number's cap policy
  KEYS[2] the per-phone key prefix
  KEYS[3] the snapshot
  KEYS[4] the campaign's hash
  ARGV[1] the range's first index
  ARGV[2] its end (last + 1)
  ARGV[3] the claim time (ms)

  Returns 1
]]
--- @include "../../runner/src/lua/includes/cap"
local cap = { policy = KEYS[1], sends = KEYS[2], recipients = KEYS[3], default = '' }
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) - 1 do capCount(cap, KEYS[4], i, tonumber(ARGV[3])) end
return 1
