-- Sliding window counter twin of model.ts. ARGV[3] limit, ARGV[4] windowMs.
-- State: the string "<window start µs> <current> <previous>", integers,
-- expiring two windows after the start (then both counts are spent).
local cost = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
local window_us = tonumber(ARGV[4]) * 1000
local EPSILON = 1e-9

local function view_at(s, c, p, at)
  local start = at - math.fmod(at, window_us)
  if s == start then return start, c, p end
  if s == start - window_us then return start, 0, c end
  return start, 0, 0
end
local function weighted(start, cur, prev, at)
  return cur + prev * (1 - (at - start) / window_us)
end
local function fits_at(s, c, p, at, want)
  local start, cur, prev = view_at(s, c, p, at)
  return weighted(start, cur, prev, at) + want <= limit + EPSILON
end
local function until_empty(start, cur, prev, now)
  if cur > 0 then return start + 2 * window_us - now end
  if prev > 0 then return start + window_us - now end
  return 0
end

local now = sluice_now
local s, c, p = -1, 0, 0
local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
if raw then
  local a, b, d = string.match(raw, '^(%d+) (%d+) (%d+)$')
  s, c, p = tonumber(a), tonumber(b), tonumber(d)
end
local start, cur, prev = view_at(s, c, p, now)
local count = weighted(start, cur, prev, now)
local want = cost
if cost == 0 then want = 1 end
local fits = count + want <= limit + EPSILON

if (not fits) or cost == 0 then
  local retry = 0
  if not fits then
    local finish = start + window_us
    local at = start + 2 * window_us
    local room = limit - want - cur
    if room >= 0 and prev > 0 and start + math.ceil(window_us * (1 - room / prev)) < finish then
      at = start + math.ceil(window_us * (1 - room / prev))
    elseif cur <= limit - want then
      at = finish
    elseif limit - want >= 0 then
      at = finish + math.ceil(window_us * (1 - (limit - want) / cur))
    end
    retry = math.max(0, math.ceil((at - now) / 1000))
    local i = 0
    while i < 100 and want <= limit and not fits_at(start, cur, prev, now + retry * 1000, want) do
      retry = retry + 1
      i = i + 1
    end
  end
  local reset = math.max(0, math.ceil((until_empty(start, cur, prev, now)) / 1000))
  return { fits and 1 or 0, sluice_floor_units(limit - count), reset, retry, 0,
    (ARGV[1] == '0' and (string.format('%.0f', start) .. ' ' .. string.format('%.0f', cur) .. ' ' .. string.format('%.0f', prev)) or '') }
end

local state = string.format('%.0f', start) .. ' ' .. string.format('%.0f', cur + cost) .. ' ' .. string.format('%.0f', prev)
local reset = math.max(0, math.ceil((until_empty(start, cur + cost, prev, now)) / 1000))
sluice_save(state, math.max(1, reset))
return { 1, sluice_floor_units(limit - (count + cost)), reset, 0, 0, '' }
