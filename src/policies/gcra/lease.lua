-- GCRA lease (hot keys, design 7.2): takes up to ARGV[5] units at once so an
-- instance can spend them locally. Same stored state (the TAT) as gcra.lua.
-- ARGV[1] need: fewest units worth taking (the request's cost); fewer available = refuse, take none
-- ARGV[3] capacity, ARGV[4] refillPerSecond, ARGV[5] want (the batch)
-- returns { granted, remaining, resetAfterMs, retryAfterMs, 0, state }
local key = KEYS[1]
local need = tonumber(ARGV[1])
local capacity = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])
local want = tonumber(ARGV[5])

local now = sluice_now_us()
local interval = 1000000 / rate
local tolerance = capacity * interval
local tat = tonumber(redis.call('GET', key)) or now
if tat < now then tat = now end
local ahead = tat - now
-- n conforms when ahead + n * interval - tolerance <= 1 (the model's 1 us slack)
local available = sluice_floor_units((tolerance - ahead + 1) / interval)
local granted = math.min(want, available)

if granted < need then
  return { 0, available, sluice_ceil_ms(ahead),
    sluice_ceil_ms(ahead + need * interval - tolerance), 0, sluice_int(tat) }
end

local ahead_after = math.floor(ahead + granted * interval)
local new_tat = now + ahead_after
redis.call('SET', key, sluice_int(new_tat), 'PX', math.max(1, sluice_ceil_ms(ahead_after)))
return { granted, sluice_floor_units((tolerance - ahead_after) / interval),
  sluice_ceil_ms(ahead_after), 0, 0, sluice_int(new_tat) }
