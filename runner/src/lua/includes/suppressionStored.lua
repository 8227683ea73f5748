--[[
  Whether a stored entry is a keyword's (a START lifts only those).

]]
local function isKeyword(stored) return stored and string.sub(stored, 1, 8) == 'keyword|' end
