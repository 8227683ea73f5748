--[[
  KEYS: the number's finishing, unlisted and tracking sets, where the campaign's tracking records
  go aside, then every key of the campaign's own (keys.ts campaignKeys, in this order). ARGV: the
  campaign id. Deletes a finished campaign in one step: it leaves the number's sets and its keys
  go (UNLINK: Redis frees a large ledger in the background). Its tracking records are moved aside
  instead, so that the caller can take their due checks out of the number's schedule (a member per
  record) after the step; the aside key expires in a day should the caller die first. A campaign
  still moving its pending recipients to their end (finishing) is not finished yet. A finished
  campaign has left the running set and the suppression copy's users already (and both let go of
  a campaign that no longer exists).

  KEYS[1] the number's finishing set
  KEYS[2] the number's unlisted set (committed, not yet in the campaign list)
  KEYS[3] the number's tracking set
  KEYS[4] the tracking records' aside key
  KEYS[5] the campaign's hash
  KEYS[6] its tracking records
  KEYS[7] its recipients (the snapshot)
  KEYS[8] its ledger
  KEYS[9] its rate ticks
  KEYS[10] its replies
  KEYS[11] its phone index
  KEYS[12] its recipients by time zone (keys.ts zoneIndexes)
  KEYS[13] where the feeder is in each zone (keys.ts zoneFeed)
  KEYS[14] its frequency cap waiting set
  ARGV[1] campaign id

  Returns 'deleted', 'gone' (no hash: deleted before) or the state that keeps it (or 'finishing')
]]
local id = ARGV[1]
local state = redis.call('HGET', KEYS[5], 'state')
if not state then return 'gone' end
if state ~= 'completed' and state ~= 'cancelled' and state ~= 'failed' then return state end
if redis.call('SISMEMBER', KEYS[1], id) == 1 then return 'finishing' end
redis.call('ZREM', KEYS[2], id)
redis.call('SREM', KEYS[3], id)
if redis.call('EXISTS', KEYS[6]) == 1 then
  redis.call('RENAME', KEYS[6], KEYS[4])
  redis.call('EXPIRE', KEYS[4], 86400)
end
redis.call('UNLINK', KEYS[5], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13], KEYS[14])
return 'deleted'
