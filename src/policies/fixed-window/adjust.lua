-- Fixed window adjust, twin of model.ts adjust(). ARGV[1] units to take whatever
-- the limit (negative: give back, down to an empty window), ARGV[4] windowMs,
-- ARGV[5] 1 = windowStart first_request, ARGV[6] offsetMs (as fixed-window.lua).
-- Only the current window's count changes. Returns the state written.
local delta = tonumber(ARGV[1])
local window_us = tonumber(ARGV[4]) * 1000
local now = sluice_now
local stored_start, stored_count
local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
if raw then
  stored_start, stored_count = string.match(raw, '^(%d+):(%d+)$')
  stored_start = tonumber(stored_start)
end
local start
if ARGV[5] == '1' then
  if stored_start and now < stored_start + window_us then start = stored_start else start = now end
else
  start = now - math.fmod(now - tonumber(ARGV[6]) * 1000, window_us)
end
local count = 0
if stored_start == start then count = tonumber(stored_count) end
count = count + delta
if count < 0 then count = 0 end
local state = string.format('%.0f', start) .. ':' .. string.format('%.0f', count)
sluice_save(state, math.max(1, math.ceil((start + window_us - now) / 1000)))
return state
