--[[
  The ledger's records and counts, shared by the ledger's scripts: a recipient's record is
  `S|attempts|first_ms|last_ms|ref|error` (ledger.ts: ref is the claim token or the message id).
  `parse` reads one, `encode` writes one as text (for a batch's one HSET), `write` stores one,
  `move` shifts recipients (one, or n) between the campaign's state counts (`n_<state>`) and
  returns what is left in the first, `finishIfDone` completes a running campaign with nothing
  pending or claimed (its `campaign.finished` event emitted) and returns whether it did.
]]
--- @include "emit"

local function parse(rec)
  local s, a, f, l, ref, err = string.match(rec, '^(%a)|(%d*)|(%d*)|(%d*)|([^|]*)|(.*)$')
  return { s = s, a = tonumber(a) or 0, f = f, l = l, ref = ref, err = err }
end
local function encode(r)
  return r.s .. '|' .. r.a .. '|' .. r.f .. '|' .. r.l .. '|' .. r.ref .. '|' .. r.err
end
local function write(ledger, idx, r)
  redis.call('HSET', ledger, idx, encode(r))
end
-- Moves n recipients (1 when not given). Returns what is left in the state moved from (nil for no move).
local function move(meta, from, to, n)
  n = n or 1
  if from == to or n == 0 then return end
  local left = redis.call('HINCRBY', meta, 'n_' .. from, -n)
  redis.call('HINCRBY', meta, 'n_' .. to, n)
  return left
end
local function finishIfDone(meta, running, outbox, id, now)
  local state = redis.call('HMGET', meta, 'state', 'n_p', 'n_c')
  if state[1] ~= 'running' then return false end
  local open = (tonumber(state[2]) or 0) + (tonumber(state[3]) or 0)
  if open == 0 then
    redis.call('HSET', meta, 'state', 'completed', 'finished_at', now)
    redis.call('SREM', running, id)
    emit(outbox, meta, id, 'campaign.finished', now)
    return true
  end
  return false
end
