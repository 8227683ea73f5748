--[[
  Extends a lock's lease, only while the token still holds it.

  KEYS[1] the lock
  ARGV[1] the token
  ARGV[2] lease ms, from now

  Returns 1 when renewed, 0 when the lock is another's or gone
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
