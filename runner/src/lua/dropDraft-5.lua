--[[
  KEYS: meta, recipients, ledger, phones, unlisted (the number's group). ARGV: id.
  Removes a draft whose time is up (Redis has expired its keys, or is about to) and answers 1; a
  campaign that is no longer a draft is left as it is (0). The global lists follow
  (dropExpiredDrafts).

  KEYS[1] meta
  KEYS[2] recipients
  KEYS[3] ledger
  KEYS[4] phones
  KEYS[5] unlisted (the number's group)
  ARGV[1] id

  Returns 1 when dropped, 0 when no longer a draft
]]
local state = redis.call('HGET', KEYS[1], 'state')
if state and state ~= 'draft' then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[1])
return 1
