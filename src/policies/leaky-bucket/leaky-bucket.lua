-- Leaky bucket (nginx limit_req) twin of model.ts.
-- ARGV[3] ratePerSecond, ARGV[4] burst, ARGV[5] requests served undelayed.
-- State: "<anchor µs>:<units>"; the queue is empty at anchor + units * interval.
local cost = tonumber(ARGV[1])
local rate = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local undelayed = tonumber(ARGV[5])

local now = sluice_now_us()
local interval = 1000000 / rate
local anchor, units, ahead = sluice_load_tat(now, interval)
local want = cost
if cost == 0 then want = 1 end
local overflow = ahead + (want - 1) * interval - burst * interval
local fits = overflow <= 1
local delay_us = ahead + (want - 1) * interval - undelayed * interval
local delay = 0
if fits and delay_us > 1 then delay = sluice_ceil_ms(delay_us) end

if (not fits) or cost == 0 then
  local retry = 0
  if not fits then retry = sluice_ceil_ms(overflow) end
  return { fits and 1 or 0, sluice_floor_units(burst + 1 - ahead / interval),
    sluice_ceil_ms(ahead), retry, delay, sluice_peeked(sluice_int(anchor) .. ':' .. sluice_int(units)) }
end

units = units + cost
local ahead_after = anchor - now + units * interval
local state = sluice_int(anchor) .. ':' .. sluice_int(units)
sluice_save(state, math.max(1, sluice_ceil_ms(ahead_after)))
return { 1, sluice_floor_units(burst + 1 - ahead_after / interval),
  sluice_ceil_ms(ahead_after), 0, delay, '' }
