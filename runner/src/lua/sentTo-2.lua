--[[
  KEYS: phones, ledger (the campaign's number's group). ARGV: phone digits.
  The recipient index of the phone (phone index "line:index") and, when its message was sent, the
  time of that send (the ledger record's last attempt, ledger.ts): { index, ms }, else nil.

  KEYS[1] phones
  KEYS[2] ledger (the campaign's number's group)
  ARGV[1] phone digits

  Returns { index, ms }, or nil
]]
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then return nil end
local index = string.match(entry, ':(%d+)$')
if not index then return nil end
local rec = redis.call('HGET', KEYS[2], index)
if not rec then return nil end
local s, l = string.match(rec, '^(%a)|%d*|%d*|(%d*)|')
if s ~= 's' or l == nil or l == '' then return nil end
return { index, l }
