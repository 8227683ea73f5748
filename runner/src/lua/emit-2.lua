--[[
  KEYS: source hash, outbox. ARGV: id, event type, now. For a campaign or run born in a final state.

  KEYS[1] 
  KEYS[2] 
  ARGV[1] 
  ARGV[2] 
  ARGV[3] 

  Returns 
]]
--- @include "includes/emit"

emit(KEYS[2], KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return 1
