--[[
  KEYS: the number's copy, its version, its users (the number's group). ARGV: the campaigns' key
  prefix (keys.campaign with no id: the same group), and the time before which a user whose
  campaign does not exist is let go (a create that died before its commit, an expired draft).
  Users whose campaign finished are let go; with none left the copy goes. 1 when the number holds
  no copy now.

  KEYS[1] the number's copy
  KEYS[2] its version
  KEYS[3] its users (the number's group)
  ARGV[1] the campaigns' key prefix
  ARGV[2] the time before which a user with no campaign is let go

  Returns 1 when the number holds no copy now, else 0
]]
local users = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
for i = 1, #users, 2 do
  local state = redis.call('HGET', ARGV[1] .. users[i], 'state')
  local finished = state == 'completed' or state == 'cancelled' or state == 'failed'
  if finished or (not state and tonumber(users[i + 1]) < tonumber(ARGV[2])) then
    redis.call('ZREM', KEYS[3], users[i])
  end
end
if redis.call('ZCARD', KEYS[3]) > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
