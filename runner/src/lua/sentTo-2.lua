--[[
  The recipient index of the phone (phone index "line:index") and, when its message was sent, the
  time of that send (the ledger record's last attempt, ledger.ts); while its send is in flight
  (claimed), the time of the claim and 'claimed', so a reply can wait for the send's answer.

  KEYS[1] phones (the campaign's number's group)
  KEYS[2] ledger
  ARGV[1] phone digits

  Returns { index, ms } when sent, { index, ms, 'claimed' } when in flight, else nil
]]
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then return nil end
local index = string.match(entry, ':(%d+)$')
if not index then return nil end
local rec = redis.call('HGET', KEYS[2], index)
if not rec then return nil end
local s, l = string.match(rec, '^(%a)|%d*|%d*|(%d*)|')
if l == nil or l == '' then return nil end
if s == 's' then return { index, l } end
if s == 'c' then return { index, l, 'claimed' } end
return nil
