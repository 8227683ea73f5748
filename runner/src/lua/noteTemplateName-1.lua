--[[
  Keeps the name of a campaign's template, once, on a campaign that still exists: a campaign
  removed between its send and this call gets no hash of one field back, which nothing would expire.

  KEYS[1] the campaign's hash
  ARGV[1] the template's name

  Returns 1 when the name was kept, 0 when the campaign is gone or holds a name already
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSETNX', KEYS[1], 'template_name', ARGV[1])
