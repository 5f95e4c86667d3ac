-- GCRA twin of model.ts. ARGV[3] capacity, ARGV[4] refillPerSecond.
-- State: "<anchor µs>:<units>", the TAT as anchor + units * T (see model.ts).
local cost = tonumber(ARGV[1])
local capacity = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])

local now = sluice_now
local interval = 1000000 / rate
local tolerance = capacity * interval
local anchor, units, ahead = sluice_load_tat(now, interval)
local want = cost
if cost == 0 then want = 1 end
local excess = ahead + want * interval - tolerance
local conforms = excess <= 1

if (not conforms) or cost == 0 then
  local retry = 0
  if not conforms then retry = math.max(0, math.ceil((excess) / 1000)) end
  return { conforms and 1 or 0, sluice_floor_units((tolerance - ahead) / interval),
    math.max(0, math.ceil((ahead) / 1000)), retry, 0, (ARGV[1] == '0' and (string.format('%.0f', anchor) .. ':' .. string.format('%.0f', units)) or '') }
end

units = units + cost
local ahead_after = anchor - now + units * interval
local state = string.format('%.0f', anchor) .. ':' .. string.format('%.0f', units)
sluice_save(state, math.max(1, math.max(0, math.ceil((ahead_after) / 1000))))
return { 1, sluice_floor_units((tolerance - ahead_after) / interval),
  math.max(0, math.ceil((ahead_after) / 1000)), 0, 0, '' }
