--[[
  A running campaign's send could not count its customer under the daily limit (audience/budget.ts):
  the campaign records when the next customer can be counted (budget_next_at, what its status shows
  until a send clears it) and when it was refused (budget_refused_at). A wait that begins is told
  once, as a campaign.waiting event in the number's outbox: a refusal begins one unless the campaign
  was refused within the gap (longer than the recheck time a waiting job looks again in, so its
  other jobs, the same ones woken and the counted customers dropping out one by one are all the
  same wait).

  KEYS[1] campaign hash
  KEYS[2] the number's outbox
  ARGV[1] campaign id
  ARGV[2] when the next customer can be counted, ms on the budget's clock
  ARGV[3] now, ms on the budget's clock
  ARGV[4] the gap, ms: refusals closer than it are one wait (budget.ts SAME_WAIT_MS)
  ARGV[5] the event's time, epoch ms

  Returns 1 when the wait began here (the event written), else 0
]]
--- @include "includes/emit"

if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
local refused = tonumber(redis.call('HGET', KEYS[1], 'budget_refused_at') or '')
redis.call('HSET', KEYS[1], 'budget_next_at', ARGV[2], 'budget_refused_at', ARGV[3])
if refused and refused + tonumber(ARGV[4]) >= tonumber(ARGV[3]) then return 0 end
emit(KEYS[2], KEYS[1], ARGV[1], 'campaign.waiting', ARGV[5])
return 1
