--[[
  Counts a send's customer under the business's daily messaging limit (audience/budget.ts), right
  after the send's claim and before the send: customers counted longer ago than the span drop out
  first; a customer counted already draws nothing more; otherwise the customer is counted while
  fewer than the limit are, else the answer is when the next customer can be counted. Times are ms
  on the budget's clock: Redis's (TIME) plus a test's offset. Without a limit (none set,
  `unlimited`) nothing is read past the limit and nothing is kept.

  KEYS[1] the limit the operator set (a count or 'unlimited'; absent: ARGV[2])
  KEYS[2] the counted customers: phone -> when it was counted
  ARGV[1] phone (digits)
  ARGV[2] the default limit (RUNNER_DAILY_LIMIT): a count, 'unlimited' or '' for none
  ARGV[3] the span, ms (24 h and the safety margin)
  ARGV[4] the test clock offset, ms (0 outside tests)

  Returns { 0 } no limit, { 1, now } counted now, { 2, now } counted already,
  { -1, now, when the next customer can be counted } the limit reached
]]
local limit = tonumber(redis.call('GET', KEYS[1]) or ARGV[2])
if not limit then return { 0 } end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[4])
local span = tonumber(ARGV[3])
-- A customer counted a whole span ago drops out: its time is at or before now - span.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - span)
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return { 2, now } end
if redis.call('ZCARD', KEYS[2]) < limit then
  redis.call('ZADD', KEYS[2], now, ARGV[1])
  -- Gone a span after the last customer counted (idle or the limit lifted), on Redis's own clock.
  redis.call('PEXPIRE', KEYS[2], span)
  return { 1, now }
end
local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
return { -1, now, tonumber(oldest[2]) + span }
