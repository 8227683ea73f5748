--[[
  KEYS: the webhook's in-flight set. ARGV: job id, now, when the slot lapses, cap. Drops lapsed
  slots (a process that died mid-delivery), then takes one for the job if the webhook is under its
  cap.

  KEYS[1] the webhook's in-flight set
  ARGV[1] job id
  ARGV[2] now
  ARGV[3] when the slot lapses
  ARGV[4] cap

  Returns 1 when a slot was taken, else 0
]]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  redis.call('PEXPIREAT', KEYS[1], ARGV[3])
  return 1
end
return 0
