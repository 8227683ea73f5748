--[[
  The number's clock rules (sending/startGateMath.ts computes the same in TypeScript): RATE_SPAN_US,
  secondCap(rate), gapUs(rate), volleySize(rate, span). The including script sets SPAN_ROOM, the
  rate span's room, from its arguments first, so a script and its caller cannot disagree. 0.002 is
  CLOCK_SLACK in startGateMath.ts, 20 MAX_VOLLEY.
]]
local RATE_SPAN_US = 1000000 * (1 + SPAN_ROOM)
local function secondCap(rate)
  return rate - math.floor(rate * SPAN_ROOM)
end
local function gapUs(rate)
  return math.max(RATE_SPAN_US / rate, 1000000 / secondCap(rate)) * (1 + 0.002)
end
-- How many starts a send job takes together at `rate` (volleySize in startGateMath.ts): the
-- rate's starts in `spanMs` (RUNNER_SEND_VOLLEY), at least one, at most 20 (MAX_VOLLEY) and the
-- last second's cap. One start a call without a rate.
local function volleySize(rate, spanMs)
  if not rate or rate <= 0 then return 1 end
  return math.max(1, math.min(20, secondCap(rate), math.floor(rate * (tonumber(spanMs) or 0) / 1000)))
end
