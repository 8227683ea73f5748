--[[
  KEYS: settle-8.lua's first five, the number's spacing hash (sending/spacing.ts), then the
  campaign's
  snapshot, the cap's per-phone prefix (a give-back: audience/cap.ts) and the number's daily counts. ARGV:
  settle-8.lua's,
  then the
  send job's last+1 index and the rate span's room. A job's settle that also takes the place on
  the number's clock of the job's next recipient: the same step as the gate's first one (the next
  place, gapUs(rate) after the one before, sending/startGateMath.ts), taken here so that recipient's start
  needs one gate call, the rate span step, instead of two. Returns { settle's answer, microseconds to
  that place }, or { settle's answer, JOB_OVER } when this was the job's last index (the job ends
  without asking the gate), or { settle's answer, -1 } for no place (no rate, or the settle did not
  leave the campaign going). Whether the indexes left are still open is not asked here (a read per
  send): the next start asks, and a place taken for a job whose rest was already settled (a resumed
  campaign) is one gap of the number's clock unused.

  KEYS[1] meta
  KEYS[2] ledger
  KEYS[3] running
  KEYS[4] outbox
  KEYS[5] ticks
  KEYS[6] the number's spacing hash
  KEYS[7] the campaign's snapshot
  KEYS[8] the cap's per-phone prefix
  KEYS[9] the number's daily counts
  ARGV[1] index
  ARGV[2] token
  ARGV[3] outcome letter
  ARGV[4] now
  ARGV[5] ref
  ARGV[6] error
  ARGV[7] pauseAfter
  ARGV[8] campaign id
  ARGV[9] counter ('' or a field to add 1 to)
  ARGV[10] the job's last+1 index
  ARGV[11] the rate span's room

  Returns { settle answer, µs to the place }, { settle answer, -2 } (JOB_OVER) or { settle answer,
  -1 }
]]
local SPAN_ROOM = tonumber(ARGV[11])
--- @include "includes/startGateMath"
--- @include "includes/ledgerRecords"
--- @include "includes/cap"
--- @include "includes/settleRecord"

local meta, ledger, running, outbox, spacing = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local idx, token, now, id = ARGV[1], ARGV[2], ARGV[4], ARGV[8]
local result = settle(meta, ledger, running, outbox, KEYS[5], idx, token, ARGV[3], now, ARGV[5], ARGV[6],
  tonumber(ARGV[7]), id, ARGV[9], { recipients = KEYS[7], sends = KEYS[8] }, KEYS[9])
if result ~= 'ok' then return { result, -1 } end
-- -2: JOB_OVER in ledger.ts.
if tonumber(idx) + 1 >= tonumber(ARGV[10]) then return { result, -2 } end
local gate = redis.call('HMGET', spacing, 'rate', 'next')
local rate = tonumber(gate[1] or '0')
if not rate or rate <= 0 then return { result, -1 } end
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local at = math.max(nowUs, tonumber(gate[2] or '0') or 0)
redis.call('HSET', spacing, 'next', string.format('%.0f', at + gapUs(rate)))
return { result, math.floor(at - nowUs), string.format('%.0f', at) }
