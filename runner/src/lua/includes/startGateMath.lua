--[[
  The number's clock rules (sending/startGateMath.ts computes the same in TypeScript): WINDOW_US,
  secondCap(rate), gapUs(rate). The including script sets GAP_ROOM, the window's room, from its
  arguments first, so a script and its caller cannot disagree. 0.002 is CLOCK_SLACK in startGateMath.ts.
]]
local WINDOW_US = 1000000 * (1 + GAP_ROOM)
local function secondCap(rate)
  return rate - math.floor(rate * GAP_ROOM)
end
local function gapUs(rate)
  return math.max(WINDOW_US / rate, 1000000 / secondCap(rate)) * (1 + 0.002)
end
