--[[
  Releases a lock, only while the token still holds it (a lease that ran out and was taken by
  another is left to its new holder).

  KEYS[1] the lock
  ARGV[1] the token

  Returns 1 when released, 0 when the lock is another's or gone
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
