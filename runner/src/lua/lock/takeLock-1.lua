--[[
  Takes a lock (a lease held by a token) for ARGV[2] ms, if it is free or already this token's
  (then its lease starts again).

  KEYS[1] the lock
  ARGV[1] the token
  ARGV[2] lease ms

  Returns '' when taken, else the token that holds it
]]
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ''
end
return holder
