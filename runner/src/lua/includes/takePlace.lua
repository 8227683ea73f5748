--[[
  The rate span step. KEYS[2] start log; `rate` the number's rate (read once by the calling script),
  ARGV[2] the member, `n` the starts taken together (a send job's volley: the first named ARGV[2], the
  others ARGV[2] .. '+' .. k). `take` records the n starts and returns { 0, their time in
  microseconds } when the rate span and the last second have room for all of them, else
  { microseconds until enough starts leave whichever is full }: `spanWait`, then `record`.

]]
local SPAN_ROOM = tonumber(ARGV[1])
--- @include "startGateMath"

-- The names of a volley's n starts in the start log.
local function startNames(n)
  local names = { ARGV[2] }
  for k = 2, n do names[k] = ARGV[2] .. '+' .. k end
  return names
end
-- { microseconds until enough starts leave whichever is full } when the rate span or the last
-- second has no room for n starts at `now`, else nil. Room for n is room for fewer.
local function spanWait(rate, now, n)
  if not rate or rate <= 0 then return nil end
  -- The rate span has no room for n starts when the (rate - n + 1)-th latest start lies inside it,
  -- the last second when the cap-th latest does (a volley, as a lone start, needs fewer than the
  -- cap before it: volleyCap in startGateMath.ts): the same test as counting the starts after each
  -- bound (a rank read in the sorted set, not a count), so starts older than the span may stay in
  -- the log meanwhile.
  local latest = redis.call('ZREVRANGE', KEYS[2], rate - n, rate - n, 'WITHSCORES')[2]
  if latest and tonumber(latest) > now - RATE_SPAN_US then
    return { math.max(1000, math.floor(tonumber(latest) + RATE_SPAN_US - now)) }
  end
  latest = redis.call('ZREVRANGE', KEYS[2], secondCap(rate) - 1, secondCap(rate) - 1, 'WITHSCORES')[2]
  if latest and tonumber(latest) > now - 1000000 then
    return { math.max(1000, math.floor(tonumber(latest) + 1000000 - now)) }
  end
  return nil
end
-- Records n starts at `now` (a number with a rate) and returns { 0, their time }: only after
-- spanWait found room for them.
local function record(rate, now, n)
  local at = string.format('%.0f', now)
  if not rate or rate <= 0 then return { 0, at } end
  local scored = {}
  for _, name in ipairs(startNames(n)) do
    scored[#scored + 1] = at
    scored[#scored + 1] = name
  end
  redis.call('ZADD', KEYS[2], unpack(scored))
  return { 0, at }
end
local function take(rate, now, n)
  n = n or 1
  return spanWait(rate, now, n) or record(rate, now, n)
end
-- The start log expires 2 s after the number's last start. Renewed at most every 0.5 s (the time
-- of the last renewal in the spacing hash), not on every start: one command less per send. The
-- starts that left the span go at the same time, not one by one on every start; those of the
-- last second before it stay, for a start counted at its place a little before now.
local function keepLog(now, renewedAt)
  if now - (tonumber(renewedAt or '0') or 0) > 500000 then
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now - RATE_SPAN_US - 1000000))
    redis.call('PEXPIRE', KEYS[2], 2000)
    redis.call('HSET', KEYS[1], 'logRenewedAt', string.format('%.0f', now))
  end
end
local function clock()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end
