--[[
  KEYS: entries, listed, changed, version, keywords, keywordsAt (the global group). ARGV: phone,
  'o' (opt-out) or 'i' (opt-in), the message's time in ms, the entry an opt-out stores, the cap.

  A phone's newest keyword message wins, by the message's own time, whatever order the deliveries
  come in: one older than (or as old as) the newest applied changes nothing, so a retry or a replay
  is a no-op; of two at the same millisecond the opt-out wins. The newest is kept in `keywords`
  (the oldest dropped past the cap); a keyword entry's own time stands in when it was dropped, so
  losing it can only keep a phone listed. An opt-out lists the phone unless it is listed already
  (the entry's source stays); an opt-in lifts only a keyword's entry. Returns
  changeSuppression-4.lua's answer with
  the outcome after the refused count: 'stale', 'kept', 'full' (the opt-out refused: not recorded,
  so its retry is applied once there is room) or 'changed'.

  KEYS[1] entries
  KEYS[2] listed
  KEYS[3] changed
  KEYS[4] version
  KEYS[5] keywords
  KEYS[6] keywordsAt (the global group)
  ARGV[1] phone
  ARGV[2] 'o' (opt-out) or 'i' (opt-in)
  ARGV[3] the message's time in ms
  ARGV[4] the entry an opt-out stores
  ARGV[5] the cap

  Returns changeSuppression-4.lua's answer with 'stale', 'kept', 'full' or 'changed'
]]
--- @include "includes/suppressionStored"

local entries, listed, changed, version, keywords, keywordsAt = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local phone, intent, ms, stored, max = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local entry = redis.call('HGET', entries, phone)
local lastIntent, lastMs
local newest = redis.call('HGET', keywords, phone)
if newest then
  lastIntent = string.sub(newest, 1, 1); lastMs = tonumber(string.sub(newest, 3))
elseif isKeyword(entry) then
  lastIntent = 'o'; lastMs = tonumber(string.match(entry, '^keyword|(%d+)|'))
end
local stale = lastMs and (ms < lastMs or (ms == lastMs and (intent == lastIntent or intent == 'i')))
if stale then return { 0, 0, 0, 'stale' } end
local out
if intent == 'o' then
  if not entry then
    if redis.call('ZCARD', listed) >= max then return { 0, 0, 1, 'full' } end
    redis.call('HSET', entries, phone, stored)
    redis.call('ZADD', listed, ms, phone)
    out = stored
  end
elseif isKeyword(entry) then
  redis.call('HDEL', entries, phone)
  redis.call('ZREM', listed, phone)
  out = ''
end
redis.call('HSET', keywords, phone, intent .. '|' .. ARGV[3])
redis.call('ZADD', keywordsAt, ms, phone)
local excess = redis.call('ZCARD', keywordsAt) - max
if excess > 0 then
  local dropped = redis.call('ZPOPMIN', keywordsAt, excess)
  for i = 1, #dropped, 2 do redis.call('HDEL', keywords, dropped[i]) end
end
if not out then return { 0, 0, 0, 'kept' } end
local last = redis.call('INCR', version)
redis.call('ZADD', changed, last, phone)
return { last, last, 0, 'changed', phone, out }
