--[[
  KEYS: spacing hash, start log, campaign hash, then the campaign's ledger, running set, outbox and
  snapshot, then the number's copy of the suppression list (ledger.ts suppressedVerdict) and the
  frequency cap's keys (cap.ts capKeys). ARGV: the rate span's room, member, "1" on a send's first call (it
  takes the next place on the number's clock) or "0" after its wait or with its place taken by the
  job's previous settle (settleAndPlace-9.lua: the rate span step only), then the send job's first
  and last+1 index ('' for a start without a claim), the campaign id, the claim token, 'again' or
  '', the place or '', a send window's opening and close ('' '' without one), the default cap
  policy, the margins, the re-check's times, the volley's span, and with 'again' the volley's size.

  A send's start and its claim in one call: the job's next recipients to send are found (openInJob,
  includes/jobClaim.lua) before a start is taken, so a job with nothing left takes none, and the starts
  taken are the claims'. A job takes a volley of starts at once (volleySize: the rate's starts in
  ARGV[17], up to its last index; one while a resume's re-check is open): the volley's recipients
  are claimed together, their starts logged at one time, and the place on the clock moves on by
  one gap per start. Returns { 0, start time in microseconds, then index, attempts, snapshot row of
  each claimed recipient }, { microseconds to wait, then call again with "0" (and the place, when
  one was taken) }, { NOT_RUNNING }, { JOB_DONE } or { WINDOW_CLOSED }.

  KEYS[1] spacing hash
  KEYS[2] start log
  KEYS[3] campaign hash
  KEYS[4] ledger
  KEYS[5] running set
  KEYS[6] outbox
  KEYS[7] snapshot
  KEYS[8] the number's copy of the suppression list
  KEYS[9] the cap's policy
  KEYS[10] the cap's per-phone prefix
  KEYS[11] the campaign's waiting set
  ARGV[1] the rate span's room, a share of a second (RUNNER_RATE_ROOM / 1000)
  ARGV[2] member
  ARGV[3] '1' on a send's first call, else '0'
  ARGV[4] the job's first index
  ARGV[5] the job's last+1 index
  ARGV[6] campaign id
  ARGV[7] claim token
  ARGV[8] 'again' or ''
  ARGV[9] the place or ''
  ARGV[10] the send window's opening or ''
  ARGV[11] the send window's close or ''
  ARGV[12] default cap policy
  ARGV[13] close margin ms (CLOSE_MARGIN_MS)
  ARGV[14] how late a place still counts, ms (placeLateMs: a quarter of the room)
  ARGV[15] how long a re-check's start holds it, ms (a claim's lifetime)
  ARGV[16] how long the others wait meanwhile before they look again, ms (RECHECK_WAIT_MS)
  ARGV[17] the volley's span, ms (RUNNER_SEND_VOLLEY; 0: one start a call)
  ARGV[18] with 'again': how many starts the volley took, else absent

  Returns { 0, start µs, index, attempts, row[, index, attempts, row ...] }, { µs to wait }, { -1 }
  not running, { -2 } job done, { -3 } send window closed
]]
--- @include "includes/takePlace"
--- @include "includes/jobClaim"

if ARGV[8] == 'again' then
  -- A start whose answer came late: its recipient stays claimed (it goes out, as one claimed before
  -- a pause does); only the start is taken anew.
  local size = tonumber(ARGV[18] or '1') or 1
  redis.call('ZREM', KEYS[2], unpack(startNames(size)))
  local again = redis.call('HMGET', KEYS[1], 'rate', 'logRenewedAt')
  local now = clock()
  local taken = take(tonumber(again[1] or '0'), now, size)
  if taken[1] == 0 then keepLog(now, again[2]) end
  return taken
end
-- The campaign's state and what the claim step's rules read of it (ledger.ts claimSettings), in one read.
local settings = redis.call('HMGET', KEYS[3], 'state', unpack(CLAIM_FIELDS))
if settings[1] ~= 'running' then return { -1 } end -- NOT_RUNNING in spacing.ts
local c = claimSettings(settings, 2)
local now = clock()
local nowMs = string.format('%.0f', math.floor(now / 1000))
local aud = {
  recipients = KEYS[7], suppressed = KEYS[8], policy = KEYS[9], sends = KEYS[10], waiting = KEYS[11], default = ARGV[12]
}
local spacing = redis.call('HMGET', KEYS[1], 'rate', 'next', 'held', 'logRenewedAt')
local rate = tonumber(spacing[1] or '0')
-- The volley's size at most: the rate's starts in its span, up to the job's last index; a re-check
-- sends one alone. The job's records are read that many at a time (jobReader); its recipients after
-- the first are looked for only once the volley is known to go (findRest).
local most = c.recheck == '' and volleySize(rate, ARGV[17]) or 1
-- The volley's recipients: { index, record, snapshot row, phone } each.
local found = {}
local job
if ARGV[4] ~= '' then
  local first, last = tonumber(ARGV[4]), tonumber(ARGV[5])
  job = jobReader(KEYS[4], aud, c, first, last, math.min(most, last - first))
  local idx, rec, row, phone = openInJob(KEYS[3], KEYS[5], KEYS[6], job, ARGV[7], nowMs, ARGV[6], c)
  if not idx then return { -2 } end -- JOB_DONE
  -- A send window's opening (audience/windows.ts, ARGV[10..11]: opened, closes; ms on the campaign's clock).
  if (ARGV[11] or '') ~= '' then
    local at = tonumber(nowMs) + c.offset
    if at < tonumber(ARGV[10]) or at >= tonumber(ARGV[11]) - tonumber(ARGV[13]) then return { -3 } end -- WINDOW_CLOSED
  end
  -- A campaign resumed after a refusal sends one recipient first: while its start holds the re-check, the others wait.
  if c.recheck ~= '' and c.recheck ~= '1' and tonumber(c.recheck) > tonumber(nowMs) then
    return { tonumber(ARGV[16]) * 1000 }
  end
  found[1] = { idx, rec, row, phone }
end
local want = 1
if found[1] then want = math.min(most, tonumber(ARGV[5]) - found[1][1]) end
local searched = not found[1]
local function findRest()
  if searched then return end
  searched = true
  while #found < want do
    local idx, rec, row, phone = openInJob(KEYS[3], KEYS[5], KEYS[6], job, ARGV[7], nowMs, ARGV[6], c)
    if not idx then return end
    found[#found + 1] = { idx, rec, row, phone }
  end
end
local place = tonumber(ARGV[9] or '')
-- A place taken by a settle before a 429's hold began is given up: the send takes one after the hold.
if (ARGV[3] == '1' or (tonumber(spacing[3] or '0') or 0) > now) and rate and rate > 0 then
  findRest()
  local at = math.max(now, tonumber(spacing[2] or '0') or 0)
  redis.call('HSET', KEYS[1], 'next', string.format('%.0f', at + gapUs(rate) * math.max(1, #found)))
  if at > now then return { math.floor(at - now), string.format('%.0f', at) } end
  place = nil
end
-- A send at its place, or a little after it, counts at its place: places are spaced so that the
-- rate span always has room for them, so a send that woke a little less late than the one a span
-- earlier is not turned away (one gate call per send instead of 1.6 at 1,000/s). Later than
-- ARGV[14] it counts when it goes, and waits if the span is full; earlier, the same. A volley
-- always counts when it goes: its starts move together, and counted up to ARGV[14] early they
-- took that much of the room from the way to the service (1,010 by claim in a span at 1,000/s).
local function countedAt(size)
  if place and size == 1 and now >= place and now - place <= tonumber(ARGV[14]) * 1000 then return place end
  return now
end
-- A span without room for the whole volley waits before its other recipients are looked at; with
-- room for it, the volley found whole is recorded without asking again.
local checked = false
if not searched then
  local wait = spanWait(rate, countedAt(want), want)
  if wait then return wait end
  findRest()
  checked = true
end
local size = math.max(1, #found)
local when = countedAt(size)
local taken
if checked and size == want then taken = record(rate, when, size) else taken = take(rate, when, size) end
if taken[1] == 0 then keepLog(now, spacing[4]) end
if taken[1] ~= 0 or not found[1] then return taken end
local answer = { 0, taken[2] }
local claimed, writes = 0, {}
for _, claim in ipairs(found) do
  local idx, rec, row, phone = claim[1], claim[2], claim[3], claim[4]
  local attempts = rec.a + (rec.s == 'p' and 1 or 0)
  claimed = claimed + claimAt(writes, idx, rec, ARGV[7], nowMs, aud, c, phone)
  answer[#answer + 1] = idx
  answer[#answer + 1] = attempts
  answer[#answer + 1] = row or false
end
if #writes > 0 then redis.call('HSET', KEYS[4], unpack(writes)) end
move(KEYS[3], 'p', 'c', claimed)
if c.recheck ~= '' then redis.call('HSET', KEYS[3], 'recheck', tonumber(nowMs) + tonumber(ARGV[15])) end
return answer
