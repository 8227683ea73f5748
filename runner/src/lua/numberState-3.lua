--[[
  KEYS: a number's finishing, running and unlisted sets. What the tick needs of one number, in one
  call.

  KEYS[1] the number's finishing set
  KEYS[2] its running set
  KEYS[3] its unlisted set

  Returns { finishing members, running members, unlisted count }
]]
return { redis.call('SMEMBERS', KEYS[1]), redis.call('SMEMBERS', KEYS[2]), redis.call('ZCARD', KEYS[3]) }
