--[[
  KEYS: gate. ARGV: places wanted, microseconds between places, horizon ms. Takes up to that many
  places on the tracking clock within the horizon, each a gap after the one before (the clock is
  Redis's, the next free place kept, so every process and a restarted one continue it). Returns
  Redis's time now, then each place's time (epoch ms on Redis's clock).

  KEYS[1] gate
  ARGV[1] places wanted
  ARGV[2] microseconds between places
  ARGV[3] horizon ms

  Returns { Redis's now, places... }
]]
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local at = math.max(nowUs, tonumber(redis.call('HGET', KEYS[1], 'next') or '0') or 0)
local gap, horizon = tonumber(ARGV[2]), nowUs + tonumber(ARGV[3]) * 1000
local places = { math.floor(nowUs / 1000) }
for i = 1, tonumber(ARGV[1]) do
  if at > horizon then break end
  places[#places + 1] = math.floor(at / 1000)
  at = at + gap
end
redis.call('HSET', KEYS[1], 'next', string.format('%.0f', at))
redis.call('PEXPIRE', KEYS[1], 3600000)
return places
