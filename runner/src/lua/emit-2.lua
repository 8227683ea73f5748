--[[
  KEYS: source hash, outbox. ARGV: id, event type, now. For a campaign or run born in a final state.

  KEYS[1] source hash
  KEYS[2] outbox
  ARGV[1] id
  ARGV[2] event type
  ARGV[3] now

  Returns 1
]]
--- @include "includes/emit"

emit(KEYS[2], KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return 1
