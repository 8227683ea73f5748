--[[
  KEYS: campaign hash, outbox. ARGV: id, now, the winner (1-based, or '' to wait for the
  operator), the decision's figures (JSON), who chose ('rule', 'first' or 'operator').

  An A/B test's decision, once (campaigns/abTest.ts): a test still undecided (phase testing, or
  waiting for the operator) gets its winner, its phase `decided` and its feed cursor back at the
  start (the feeder then sends the remainder), and `campaign.variant_chosen` is emitted with the
  figures (the event copies the hash), and delivery tracking walks the ledger from the start, the
  remainder now with it (tracking/tracking.ts walked the test on a cursor of its own); '' only moves a testing
  campaign to `waiting`. Two
  processes deciding at once decide once: the second finds the phase moved.

  KEYS[1] campaign hash
  KEYS[2] outbox
  ARGV[1] campaign id
  ARGV[2] now (epoch ms)
  ARGV[3] winner (1-based) or ''
  ARGV[4] figures (JSON)
  ARGV[5] chosen by

  Returns 'decided' (this call decided), 'waiting', 'taken' (decided before) or '' (no test)
]]
--- @include "includes/emit"

local phase = redis.call('HGET', KEYS[1], 'ab_phase') or ''
if phase == 'decided' then return 'taken' end
if phase ~= 'testing' and phase ~= 'waiting' then return '' end
if ARGV[3] == '' then
  if phase == 'waiting' then return 'waiting' end
  redis.call('HSET', KEYS[1], 'ab_phase', 'waiting', 'ab_figures', ARGV[4])
  return 'waiting'
end
redis.call('HSET', KEYS[1], 'ab_phase', 'decided', 'ab_winner', ARGV[3], 'ab_figures', ARGV[4], 'ab_chosen_by',
  ARGV[5], 'ab_decided_at', ARGV[2], 'cursor', 0, 'last_progress_at', ARGV[2], 't_cursor', 0)
emit(KEYS[2], KEYS[1], ARGV[1], 'campaign.variant_chosen', ARGV[2])
return 'decided'
