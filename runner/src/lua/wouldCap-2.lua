--[[
  KEYS: the number's policy, the per-phone prefix. ARGV: the default policy, then phones. For a
  dry run: the rule that would cap each phone now, '' where none would.

  KEYS[1] the number's policy
  KEYS[2] the per-phone prefix
  ARGV[1] the default policy (then phones)

  Returns each phone's rule, '' where none
]]
--- @include "includes/cap"

local policy = capPolicy({ policy = KEYS[1], default = ARGV[1] })
local now = capNow()
local answer = {}
for i = 2, #ARGV do
  local label = ''
  if policy then
    local at, l = capNext(policy, capTimes(redis.call('GET', KEYS[2] .. ARGV[i])), now)
    if at then label = l end
  end
  answer[#answer + 1] = label
end
return answer
