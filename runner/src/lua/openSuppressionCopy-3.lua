--[[
  KEYS: the number's copy, its version, its users (the number's group). ARGV: a campaign id, the
  time. The campaign keeps the number's copy until it finishes; a number without one starts an
  empty copy at version 0 (the repair then fills it).

  KEYS[1] the number's copy
  KEYS[2] its version
  KEYS[3] its users (the number's group)
  ARGV[1] a campaign id
  ARGV[2] the time

  Returns 1
]]
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('DEL', KEYS[1]); redis.call('SET', KEYS[2], '0') end
return 1
