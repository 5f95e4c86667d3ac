-- Fixed window adjust, twin of model.ts adjust(). ARGV[1] units to take whatever
-- the limit (negative: give back, down to an empty window), ARGV[4] windowMs,
-- ARGV[5] 1 = windowStart first_request, 2 = calendar, ARGV[6] offsetMs,
-- ARGV[7..9] calendar boundaries (as fixed-window.lua).
-- Only the current window's count changes. Returns the state written.
local delta = tonumber(ARGV[1])
local window_us = tonumber(ARGV[4]) * 1000
local now = sluice_now
local stored_start, stored_count, stored_end
local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
if raw then
  -- a calendar window's state adds its end: "<start>:<count>:<end>"
  stored_start, stored_count, stored_end = string.match(raw, '^(%d+):(%d+):?(%d*)$')
  stored_start = tonumber(stored_start)
  stored_end = tonumber(stored_end)
end
local start
local window_end
if ARGV[5] == '2' then
  -- calendar: [b0, b1) before the middle boundary, [b1, b2) from it on, by Redis TIME
  local b1 = tonumber(ARGV[8]) * 1000
  if now < b1 then start, window_end = tonumber(ARGV[7]) * 1000, b1 else start, window_end = b1, tonumber(ARGV[9]) * 1000 end
elseif ARGV[5] == '1' then
  if stored_start and now < stored_start + window_us then start = stored_start else start = now end
else
  start = now - math.fmod(now - tonumber(ARGV[6]) * 1000, window_us)
end
if window_end == nil then window_end = start + window_us end
local count = 0
-- an older window counts nothing (the key normally expired with it); a calendar
-- window of other boundaries (a changed zone or anchor) still open carries its count
if stored_start == start then count = tonumber(stored_count)
elseif ARGV[5] == '2' and stored_end and stored_start <= now and now < stored_end then count = tonumber(stored_count) end
local ends = ''
if ARGV[5] == '2' then ends = ':' .. string.format('%.0f', window_end) end
count = count + delta
if count < 0 then count = 0 end
local state = string.format('%.0f', start) .. ':' .. string.format('%.0f', count) .. ends
sluice_save(state, math.max(1, math.ceil((window_end - now) / 1000)))
return state
