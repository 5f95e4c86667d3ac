-- Fixed window twin of model.ts. ARGV[3] limit, ARGV[4] windowMs.
-- State: the string "<window start µs>:<count>", expiring with its window.
local cost = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
local window_us = tonumber(ARGV[4]) * 1000

local now = sluice_now_us()
local start = now - math.fmod(now, window_us)
local until_end = start + window_us - now
local count = 0
local raw = sluice_load()
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
  if not fits then retry = sluice_ceil_ms(until_end) end
  return { fits and 1 or 0, limit - count, sluice_ceil_ms(until_end), retry, 0,
    sluice_peeked(sluice_int(start) .. ':' .. sluice_int(count)) }
end

local after = count + cost
local state = sluice_int(start) .. ':' .. sluice_int(after)
sluice_save(state, math.max(1, sluice_ceil_ms(until_end)))
return { 1, limit - after, sluice_ceil_ms(until_end), 0, 0, '' }
