-- GCRA twin of model.ts. ARGV[3] capacity, ARGV[4] refillPerSecond.
-- State: "<anchor µs>:<units>", the TAT as anchor + units * T (see model.ts).
local cost = tonumber(ARGV[1])
local capacity = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])

local now = sluice_now_us()
local interval = 1000000 / rate
local tolerance = capacity * interval
local anchor, units, ahead = sluice_load_tat(now, interval)
local want = cost
if cost == 0 then want = 1 end
local excess = ahead + want * interval - tolerance
local conforms = excess <= 1

if (not conforms) or cost == 0 then
  local retry = 0
  if not conforms then retry = sluice_ceil_ms(excess) end
  return { conforms and 1 or 0, sluice_floor_units((tolerance - ahead) / interval),
    sluice_ceil_ms(ahead), retry, 0, sluice_peeked(sluice_int(anchor) .. ':' .. sluice_int(units)) }
end

units = units + cost
local ahead_after = anchor - now + units * interval
local state = sluice_int(anchor) .. ':' .. sluice_int(units)
sluice_save(state, math.max(1, sluice_ceil_ms(ahead_after)))
return { 1, sluice_floor_units((tolerance - ahead_after) / interval),
  sluice_ceil_ms(ahead_after), 0, 0, '' }
