-- GCRA twin of model.ts. ARGV[3] capacity, ARGV[4] refillPerSecond.
-- State: one integer, the TAT (theoretical arrival time) in microseconds.
local key = KEYS[1]
local cost = tonumber(ARGV[1])
local capacity = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])

local now = sluice_now_us()
local interval = 1000000 / rate
local tolerance = capacity * interval
local tat = tonumber(redis.call('GET', key)) or now
if tat < now then tat = now end
local ahead = tat - now
local want = cost
if cost == 0 then want = 1 end
local excess = ahead + want * interval - tolerance
local conforms = excess <= 1

if (not conforms) or cost == 0 then
  local retry = 0
  if not conforms then retry = sluice_ceil_ms(excess) end
  return { conforms and 1 or 0, sluice_floor_units((tolerance - ahead) / interval),
    sluice_ceil_ms(ahead), retry, 0, sluice_int(tat) }
end

local ahead_after = math.floor(ahead + cost * interval)
local new_tat = now + ahead_after
redis.call('SET', key, sluice_int(new_tat), 'PX', math.max(1, sluice_ceil_ms(ahead_after)))
return { 1, sluice_floor_units((tolerance - ahead_after) / interval),
  sluice_ceil_ms(ahead_after), 0, 0, sluice_int(new_tat) }
