-- Leaky bucket (nginx limit_req) twin of model.ts.
-- ARGV[3] ratePerSecond, ARGV[4] burst, ARGV[5] requests served undelayed.
-- State: "<anchor µs>:<units>"; the queue is empty at anchor + units * interval.
local cost = tonumber(ARGV[1])
local rate = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local undelayed = tonumber(ARGV[5])

local now = sluice_now
local interval = 1000000 / rate
local anchor, units, ahead = sluice_load_tat(now, interval)
local want = cost
if cost == 0 then want = 1 end
local overflow = ahead + (want - 1) * interval - burst * interval
local fits = overflow <= 1
local delay_us = ahead + (want - 1) * interval - undelayed * interval
local delay = 0
if fits and delay_us > 1 then delay = math.max(0, math.ceil((delay_us) / 1000)) end

if (not fits) or cost == 0 then
  local retry = 0
  if not fits then retry = math.max(0, math.ceil((overflow) / 1000)) end
  return { fits and 1 or 0, sluice_floor_units(burst + 1 - ahead / interval),
    math.max(0, math.ceil((ahead) / 1000)), retry, delay, (ARGV[1] == '0' and (string.format('%.0f', anchor) .. ':' .. string.format('%.0f', units)) or '') }
end

units = units + cost
local ahead_after = anchor - now + units * interval
local state = string.format('%.0f', anchor) .. ':' .. string.format('%.0f', units)
sluice_save(state, math.max(1, math.max(0, math.ceil((ahead_after) / 1000))))
return { 1, sluice_floor_units(burst + 1 - ahead_after / interval),
  math.max(0, math.ceil((ahead_after) / 1000)), 0, delay, '' }
