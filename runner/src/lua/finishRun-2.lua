--[[
  KEYS: run, outbox (the collection's group). ARGV: id, now, then field/value pairs (the final state
  among them).
  Settles a run once: a run already in a final state is left as it is, so of two processes that
  end the same run one does, and reindex.finished is written with it, in the same step.

  KEYS[1] run
  KEYS[2] outbox (the collection's group)
  ARGV[1] id
  ARGV[2] now (then field/value pairs)

  Returns 1 when settled now, 0 when already final
]]
--- @include "includes/emit"

local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'completed' or state == 'failed' or state == 'skipped' then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
emit(KEYS[2], KEYS[1], ARGV[1], 'reindex.finished', ARGV[2])
return 1
