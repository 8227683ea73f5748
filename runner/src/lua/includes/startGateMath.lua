--[[
  The number's clock rules (sending/startGateMath.ts computes the same in TypeScript): RATE_SPAN_US,
  secondCap(rate), gapUs(rate). The including script sets SPAN_ROOM, the rate span's room, from its
  arguments first, so a script and its caller cannot disagree. 0.002 is CLOCK_SLACK in startGateMath.ts.
]]
local RATE_SPAN_US = 1000000 * (1 + SPAN_ROOM)
local function secondCap(rate)
  return rate - math.floor(rate * SPAN_ROOM)
end
local function gapUs(rate)
  return math.max(RATE_SPAN_US / rate, 1000000 / secondCap(rate)) * (1 + 0.002)
end
