--[[
  KEYS: slot. ARGV: token, answer, seconds. Keeps the answer unless another request holds the slot
  (or the commit kept it already).

  KEYS[1] slot
  ARGV[1] token
  ARGV[2] answer
  ARGV[3] seconds

  Returns 1 when kept, else 0
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) return 1 end return 0
