--[[
  A send the service refused for what the campaign cannot use now (sending/refusals.ts): the
  template, the sending number, the API key. The claim goes back to pending (nothing was sent), the
  campaign's blocked streak grows by one, and the campaign pauses, with the reason and the
  service's message, when the streak reaches the threshold or the send was a resume's re-check;
  the event campaign.paused is written in the same step. A send claimed after the last refusal was
  answered breaks the streak; one claimed before it, answered late, went out before the refusal
  and says nothing of it (settleRecord records `sent_claimed_at`).

  KEYS[1] meta
  KEYS[2] ledger
  KEYS[3] running
  KEYS[4] outbox
  KEYS[5] ticks
  KEYS[6] the campaign's snapshot
  KEYS[7] the cap's per-phone prefix
  ARGV[1] index
  ARGV[2] token
  ARGV[3] now
  ARGV[4] error (last_error when it pauses)
  ARGV[5] campaign id
  ARGV[6] threshold: blocked recipients in a row that pause it
  ARGV[7] reason (template_refused, number_refused, unauthorized)
  ARGV[8] the service's message

  Returns 'lost' (the claim is no longer this attempt's), 'ok' (pending again, still running) or
  'paused' (this settle paused it)
]]
--- @include "includes/ledgerRecords"
--- @include "includes/cap"
--- @include "includes/settleRecord"

local meta, running, outbox, id, now = KEYS[1], KEYS[3], KEYS[4], ARGV[5], ARGV[3]
-- Read before the settle, which opens a re-check again for a send back to pending.
local recheck = redis.call('HEXISTS', meta, 'recheck') == 1
-- No daily counts key: a send back to pending is neither a send nor a refusal of the recipient there.
local settled = settle(meta, KEYS[2], running, outbox, KEYS[5], ARGV[1], ARGV[2], 'p', now, '', ARGV[4], 0, id, '',
  { recipients = KEYS[6], sends = KEYS[7] })
if settled ~= 'ok' then return settled end
local last = redis.call('HMGET', meta, 'sent_claimed_at', 'blocked_at', 'blocked_streak')
-- A send claimed after the last refusal was answered broke the row: this refusal starts a new one.
local streak = 1
if (tonumber(last[1]) or 0) <= (tonumber(last[2]) or 0) then streak = (tonumber(last[3]) or 0) + 1 end
redis.call('HSET', meta, 'blocked_streak', streak, 'blocked_at', now)
if redis.call('HGET', meta, 'state') ~= 'running' then return 'ok' end
if streak < tonumber(ARGV[6]) and not recheck then return 'ok' end
redis.call('HSET', meta, 'state', 'paused', 'blocked_streak', 0, 'last_error', ARGV[4], 'paused_reason', ARGV[7],
  'paused_message', ARGV[8])
redis.call('HDEL', meta, 'recheck')
redis.call('SREM', running, id)
emit(outbox, meta, id, 'campaign.paused', now)
return 'paused'
