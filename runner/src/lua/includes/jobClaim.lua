--[[
  A send job's recipients (jobs.ts), for the start gate's script (sending/spacing.ts),
  which takes the start and the claim in one call. `jobReader` reads the job's records a volley at a
  time; `openInJob` finds the job's next recipient to send: pending, or claimed by this attempt; a
  claim an earlier attempt left is turned unknown on the way (it may have sent: never resent); a
  pending recipient the audience rules refuse is made final (expired, suppressed, capped) or, over
  the frequency cap in a campaign that waits, left pending in its waiting set (audience/cap.ts).
  `claimAt` claims it and counts it on its phone's cap; the caller writes the claims and moves the
  campaign's counts once for all it claims.

]]
--- @include "ledgerRecords"
--- @include "cap"

-- What the claim step's rules read of the campaign: START reads them with its state, in one HMGET
-- (its fields from position at on).
local CLAIM_FIELDS = { 'end_at', 'clock_offset', 'transactional', 'recheck', 'ab_phase' }
local function claimSettings(values, at)
  local phase = values[at + 4]
  return {
    endAt = tonumber(values[at] or ''),
    offset = tonumber(values[at + 1] or '0') or 0,
    transactional = values[at + 2] == '1',
    -- A resume's re-check (sending/refusals.ts): '' none, '1' open, else ms until which a start holds it.
    recheck = values[at + 3] or '',
    -- An A/B test before its winner is known (campaigns/abTest.ts): its remainder waits, pending.
    holdRemainder = phase == 'testing' or phase == 'waiting'
  }
end
-- An A/B test's snapshot row ends with its variant, a bare number (campaigns/schema.ts
-- encodeRecipient): 0 is the winner's remainder. Nil for a row of a campaign without a test.
local function rowVariant(row)
  return row and string.match(row, ',(%d+)%]$')
end
-- The campaign's end (audience/windows.ts), on the campaign's clock: Redis's, plus a test's clock_offset.
local function expiredVerdict(c, now)
  return c.endAt ~= nil and tonumber(now) + c.offset >= c.endAt
end
-- A phone on the number's copy of the suppression list (audience/suppression.ts) is made final
-- here, suppressed, with the list's note (jobReader read it); a transactional campaign sends all the same.
local function suppressedVerdict(c, meta, ledger, note, i, r)
  if not note or c.transactional then return false end
  r.s = 'z'; r.err = note
  write(ledger, i, r); move(meta, 'p', 'z')
  return true
end
-- The job's records from `first` to `last` - 1, read `chunk` indexes at a time with the snapshot rows
-- of those still open and the suppression notes of their phones: three HMGETs a volley instead of
-- three HGETs a recipient. aud: the audience rules' keys (recipients: the snapshot, suppressed: the
-- number's copy of the list, and the cap's: includes/cap.lua) and the default cap policy; c:
-- claimSettings. Nothing else writes them while the script runs; its own writes are to records read.
local function jobReader(ledger, aud, c, first, last, chunk)
  return { ledger = ledger, aud = aud, c = c, next = first, last = last, chunk = math.max(1, chunk),
    loadedTo = first, recs = {}, rows = {}, notes = {} }
end
local function readChunk(job)
  local fields, open, phones = {}, {}, {}
  for i = job.loadedTo, math.min(job.loadedTo + job.chunk, job.last) - 1 do fields[#fields + 1] = i end
  job.loadedTo = job.loadedTo + #fields
  local recs = redis.call('HMGET', job.ledger, unpack(fields))
  for k, i in ipairs(fields) do
    if recs[k] then
      job.recs[i] = recs[k]
      local s = string.sub(recs[k], 1, 1)
      if s == 'p' or s == 'c' then open[#open + 1] = i end
    end
  end
  if #open == 0 then return end
  local rows = redis.call('HMGET', job.aud.recipients, unpack(open))
  for k, i in ipairs(open) do
    if rows[k] then
      job.rows[i] = rows[k]
      local phone = rowPhone(rows[k])
      if phone and string.sub(job.recs[i], 1, 1) == 'p' then phones[#phones + 1] = phone end
    end
  end
  if #phones == 0 or job.c.transactional then return end
  local notes = redis.call('HMGET', job.aud.suppressed, unpack(phones))
  for k, phone in ipairs(phones) do job.notes[phone] = notes[k] or nil end
end
-- Returns the index, its record, its snapshot row and its phone, and moves the reader past it; a
-- pending recipient a rule refuses is made final on the way, as a lost claim is.
local function openInJob(meta, running, outbox, job, token, now, id, c)
  local lost = false
  local ledger, aud = job.ledger, job.aud
  for i = job.next, job.last - 1 do
    if i >= job.loadedTo then readChunk(job) end
    local rec = job.recs[i]
    if rec then
      local r = parse(rec)
      if r.s == 'p' then
        if expiredVerdict(c, now) then
          -- The words of EXPIRED_REASON in ledger.ts.
          r.s = 'e'; r.err = 'the campaign ended before it was sent'
          write(ledger, i, r); move(meta, 'p', 'e'); lost = true
        else
          local row = job.rows[i]
          local phone = rowPhone(row)
          if c.holdRemainder and rowVariant(row) == '0' then -- luacheck: ignore 542
            -- The remainder is not this job's before the winner is chosen: left pending, untouched.
          elseif suppressedVerdict(c, meta, ledger, phone and job.notes[phone], i, r) then lost = true
          -- Capped (final: the campaign may be done) or waiting: not this job's to send now.
          elseif capVerdict(aud, c, phone, meta, ledger, i, r) then lost = true
          else job.next = i + 1; return i, r, row, phone end
        end
      elseif r.s == 'c' and r.ref == token then
        local row = job.rows[i]
        job.next = i + 1
        return i, r, row, rowPhone(row)
      elseif r.s == 'c' then
        r.s = 'u'; r.err = 'an earlier attempt claimed this send and never settled it (crash or stall)'
        write(ledger, i, r); move(meta, 'c', 'u'); lost = true
      end
    end
  end
  job.next = job.last
  if lost then finishIfDone(meta, running, outbox, id, now) end
  return nil
end
-- Claims the recipient openInJob found and counts it on its phone's frequency cap: its record is
-- added to `writes` (field/value pairs of the ledger, for one HSET). Returns 1 when it was pending,
-- else 0 (claimed by this attempt already): the caller moves the campaign's counts once for all it claims.
local function claimAt(writes, i, r, token, now, aud, c, phone)
  if r.s ~= 'p' then return 0 end
  r.s = 'c'; r.a = r.a + 1; if r.f == '' then r.f = now end; r.l = now; r.ref = token; r.err = ''
  writes[#writes + 1] = i
  writes[#writes + 1] = encode(r)
  capCount(aud, c, phone, now)
  return 1
end
