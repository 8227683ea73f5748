--[[
  KEYS: settle-8.lua's first five, the number's spacing hash (sending/spacing.ts), then the
  campaign's snapshot, the cap's per-phone prefix (a give-back: audience/cap.ts) and the number's
  daily counts. The final settles of a send job's volley of recipients (sent, failed or unknown;
  one recipient when the job sends one at a time), each as settle-8.lua's (a volley of sends only
  with the campaign's counters written once: settleSent), and the place on the
  number's clock of the job's next volley: the same step as the gate's first one (the next place,
  one gap per start after the one before, sending/startGateMath.ts), taken here so that volley's
  start needs one gate call, the rate span step, instead of two. Whether the indexes left are still
  open is not asked here (a read per send): the next start asks, and a place taken for a job whose
  rest was already settled (a resumed campaign) is a volley's gaps of the number's clock unused.

  KEYS[1] meta
  KEYS[2] ledger
  KEYS[3] running
  KEYS[4] outbox
  KEYS[5] ticks
  KEYS[6] the number's spacing hash
  KEYS[7] the campaign's snapshot
  KEYS[8] the cap's per-phone prefix
  KEYS[9] the number's daily counts
  ARGV[1] now
  ARGV[2] pauseAfter
  ARGV[3] campaign id
  ARGV[4] the job's last+1 index
  ARGV[5] the rate span's room
  ARGV[6] the volley's span, ms (RUNNER_SEND_VOLLEY)
  ARGV[7] claim token
  ARGV[8] '1' to take the job's next place, '' for none (the job takes a fresh start)
  ARGV[9..] per settled recipient, four each: index, outcome letter, ref, error

  Returns { answer, µs to the place, the place µs }, { answer, -2 } (JOB_OVER: the volley held the
  job's last index, the job ends without asking the gate) or { answer, -1 } (no place: no rate, none
  asked, or a settle that did not leave the campaign going). The answer is the volley's: the
  campaign's new state if a settle changed it (`paused`, `completed`), else `lost` if any claim was
  lost, else `ok`.
]]
local SPAN_ROOM = tonumber(ARGV[5])
--- @include "includes/startGateMath"
--- @include "includes/ledgerRecords"
--- @include "includes/cap"
--- @include "includes/settleRecord"

local meta, ledger, running, outbox, spacing = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local now, token, id = ARGV[1], ARGV[7], ARGV[3]
local answer, last = 'ok', -1
local idxs, refs, allSent = {}, {}, true
for at = 9, #ARGV, 4 do
  idxs[#idxs + 1] = ARGV[at]
  refs[ARGV[at]] = ARGV[at + 2]
  if ARGV[at + 1] ~= 's' then allSent = false end
  last = math.max(last, tonumber(ARGV[at]))
end
if allSent then
  answer = settleSent(meta, ledger, running, outbox, KEYS[5], idxs, refs, token, now, id, KEYS[9])
else
  for at = 9, #ARGV, 4 do
    local result = settle(meta, ledger, running, outbox, KEYS[5], ARGV[at], token, ARGV[at + 1], now, ARGV[at + 2],
      ARGV[at + 3], tonumber(ARGV[2]), id, '', { recipients = KEYS[7], sends = KEYS[8] }, KEYS[9])
    if result == 'lost' and answer == 'ok' then answer = 'lost' end
    if result ~= 'ok' and result ~= 'lost' then answer = result end
  end
end
if answer ~= 'ok' then return { answer, -1 } end
-- -2: JOB_OVER in ledger.ts.
if last + 1 >= tonumber(ARGV[4]) then return { answer, -2 } end
if ARGV[8] ~= '1' then return { answer, -1 } end
local gate = redis.call('HMGET', spacing, 'rate', 'next')
local rate = tonumber(gate[1] or '0')
if not rate or rate <= 0 then return { answer, -1 } end
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local at = math.max(nowUs, tonumber(gate[2] or '0') or 0)
local size = math.min(volleySize(rate, ARGV[6]), tonumber(ARGV[4]) - last - 1)
redis.call('HSET', spacing, 'next', string.format('%.0f', at + gapUs(rate) * size))
return { answer, math.floor(at - nowUs), string.format('%.0f', at) }
