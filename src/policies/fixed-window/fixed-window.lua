-- Fixed window twin of model.ts. ARGV[3] limit, ARGV[4] windowMs.
-- State: the string "<window start µs>:<count>", expiring with its window.
local cost = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
local window_us = tonumber(ARGV[4]) * 1000

local now = sluice_now
local start = now - math.fmod(now, window_us)
local until_end = start + window_us - now
local count = 0
local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
if raw then
  local stored_start, stored_count = string.match(raw, '^(%d+):(%d+)$')
  -- an older window counts nothing (the key normally expired with it)
  if tonumber(stored_start) == start then count = tonumber(stored_count) end
end
local want = cost
if cost == 0 then want = 1 end
local fits = count + want <= limit

if (not fits) or cost == 0 then
  local retry = 0
  if not fits then retry = math.max(0, math.ceil((until_end) / 1000)) end
  return { fits and 1 or 0, math.max(0, limit - count), math.max(0, math.ceil((until_end) / 1000)), retry, 0,
    (ARGV[1] == '0' and (string.format('%.0f', start) .. ':' .. string.format('%.0f', count)) or '') }
end

local after = count + cost
local state = string.format('%.0f', start) .. ':' .. string.format('%.0f', after)
sluice_save(state, math.max(1, math.max(0, math.ceil((until_end) / 1000))))
return { 1, limit - after, math.max(0, math.ceil((until_end) / 1000)), 0, 0, '' }
