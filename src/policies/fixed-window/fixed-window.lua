-- Fixed window twin of model.ts. ARGV[3] limit, ARGV[4] windowMs,
-- ARGV[5] 1 = windowStart first_request, 2 = calendar (else aligned), ARGV[6] offsetMs,
-- calendar only: ARGV[7..9] three window boundaries in ms, from the time-zone rules.
-- State: the string "<window start µs>:<count>" (a calendar window adds ":<end µs>"), expiring with its window.
local cost = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
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
  -- the bucket's open window, or one that opens now
  if stored_start and now < stored_start + window_us then start = stored_start else start = now end
else
  start = now - math.fmod(now - tonumber(ARGV[6]) * 1000, window_us)
end
if window_end == nil then window_end = start + window_us end
local until_end = window_end - now
local count = 0
-- an older window counts nothing (the key normally expired with it); a calendar
-- window of other boundaries (a changed zone or anchor) still open carries its count
if stored_start == start then count = tonumber(stored_count)
elseif ARGV[5] == '2' and stored_end and stored_start <= now and now < stored_end then count = tonumber(stored_count) end
local ends = ''
if ARGV[5] == '2' then ends = ':' .. string.format('%.0f', window_end) end
local want = cost
if cost == 0 then want = 1 end
local fits = count + want <= limit

if (not fits) or cost == 0 then
  local retry = 0
  if not fits then retry = math.max(0, math.ceil((until_end) / 1000)) end
  return { fits and 1 or 0, math.max(0, limit - count), math.max(0, math.ceil((until_end) / 1000)), retry, 0,
    (ARGV[1] == '0' and (string.format('%.0f', start) .. ':' .. string.format('%.0f', count) .. ends) or '') }
end

local after = count + cost
local state = string.format('%.0f', start) .. ':' .. string.format('%.0f', after) .. ends
sluice_save(state, math.max(1, math.max(0, math.ceil((until_end) / 1000))))
return { 1, limit - after, math.max(0, math.ceil((until_end) / 1000)), 0, 0, '' }
