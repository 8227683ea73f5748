--[[
  KEYS: a number's finishing, running and unlisted sets. What the tick needs of one number, in one call.

  KEYS[1] 
  KEYS[2] 
  KEYS[3] 

  Returns 
]]
return { redis.call('SMEMBERS', KEYS[1]), redis.call('SMEMBERS', KEYS[2]), redis.call('ZCARD', KEYS[3]) }
