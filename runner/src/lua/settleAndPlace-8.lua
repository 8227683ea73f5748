--[[
  KEYS: SETTLE's first five, the number's spacing hash (campaigns/spacing.ts), then the campaign's
  snapshot and the cap's per-phone prefix (a give-back: campaigns/cap.ts). ARGV: SETTLE's, then the
  run's last+1 index and the start gate's window room. A run's settle that also takes the place on
  the number's clock of the run's next recipient: the same step as the gate's first one (the next
  place, gapUs(rate) after the one before, campaigns/gap.ts), taken here so that recipient's start
  needs one gate call, the window step, instead of two. Returns { SETTLE's answer, microseconds to
  that place }, or { SETTLE's answer, RUN_OVER } when this was the run's last index (the run ends
  without asking the gate), or { SETTLE's answer, -1 } for no place (no rate, or the settle did not
  leave the campaign going). Whether the indexes left are still open is not asked here (a read per
  send): the next start asks, and a place taken for a run whose rest was already settled (a resumed
  campaign) is one gap of the number's clock unused.

  KEYS[1] 
  KEYS[2] 
  KEYS[3] 
  KEYS[4] 
  KEYS[5] 
  KEYS[6] 
  KEYS[7] 
  KEYS[8] 
  ARGV[1] 
  ARGV[2] 
  ARGV[3] 
  ARGV[4] 
  ARGV[5] 
  ARGV[6] 
  ARGV[7] 
  ARGV[8] 
  ARGV[9] 
  ARGV[10] 
  ARGV[11] 

  Returns 
]]
local GAP_ROOM = tonumber(ARGV[11])
--- @include "includes/gap"
--- @include "includes/ledgerRecords"
--- @include "includes/cap"
--- @include "includes/settleRecord"

local meta, ledger, running, outbox, spacing = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local idx, token, now, id = ARGV[1], ARGV[2], ARGV[4], ARGV[8]
local result = settle(meta, ledger, running, outbox, KEYS[5], idx, token, ARGV[3], now, ARGV[5], ARGV[6], tonumber(ARGV[7]), id, ARGV[9], { recipients = KEYS[7], sends = KEYS[8] })
if result ~= 'ok' then return { result, -1 } end
if tonumber(idx) + 1 >= tonumber(ARGV[10]) then return { result, -2 } -- RUN_OVER in ledger.ts end
local gate = redis.call('HMGET', spacing, 'rate', 'next')
local rate = tonumber(gate[1] or '0')
if not rate or rate <= 0 then return { result, -1 } end
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local at = math.max(nowUs, tonumber(gate[2] or '0') or 0)
redis.call('HSET', spacing, 'next', string.format('%.0f', at + gapUs(rate)))
return { result, math.floor(at - nowUs), string.format('%.0f', at) }
