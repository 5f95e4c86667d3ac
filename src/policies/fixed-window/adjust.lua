-- Fixed window adjust, twin of model.ts adjust(). ARGV[1] units to take whatever
-- the limit (negative: give back, down to an empty window), ARGV[4] windowMs.
-- Only the current window's count changes. Returns the state written.
local delta = tonumber(ARGV[1])
local window_us = tonumber(ARGV[4]) * 1000
local now = sluice_now
local start = now - math.fmod(now, window_us)
local count = 0
local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
if raw then
  local stored_start, stored_count = string.match(raw, '^(%d+):(%d+)$')
  if tonumber(stored_start) == start then count = tonumber(stored_count) end
end
count = count + delta
if count < 0 then count = 0 end
local state = string.format('%.0f', start) .. ':' .. string.format('%.0f', count)
sluice_save(state, math.max(1, math.ceil((start + window_us - now) / 1000)))
return state
