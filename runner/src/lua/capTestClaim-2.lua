--[[
  KEYS: the number's policy, the per-phone prefix. ARGV: the default policy, the phone, and
  'look' for a dry run. A test send's claim, by the claim's own rule: { -1, rule, next allowed }
  when the cap holds the phone back, else the claim's time counted on the phone ({ 0 } when no cap
  applies, or when only looking: nothing counted).

  KEYS[1] the number's policy
  KEYS[2] the per-phone prefix
  ARGV[1] the default policy
  ARGV[2] the phone
  ARGV[3] 'look' to count nothing (a dry run), else ''

  Returns { -1, rule, next allowed }, { 0 } without a cap, else the claim's time
]]
--- @include "includes/cap"

local cap = { policy = KEYS[1], sends = KEYS[2], default = ARGV[1] }
local policy = capApplies(cap, {}, ARGV[2])
if not policy then return { 0 } end
local now = capNow()
local at, label = capNext(policy, capTimes(redis.call('GET', cap.sends .. ARGV[2])), now)
if at then return { -1, label, isoTime(at) } end
if ARGV[3] == 'look' then return { 0 } end
capCount(cap, {}, ARGV[2], now)
return { now }
