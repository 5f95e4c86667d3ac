-- Token bucket lease (hot keys, design 7.2): takes up to ARGV[5] tokens at once
-- so an instance can spend them locally. Same stored state as token-bucket.lua.
-- ARGV[1] need: fewest tokens worth taking (the request's cost); fewer available = refuse, take none
-- ARGV[3] capacity, ARGV[4] refillPerSecond, ARGV[5] want (the batch)
-- returns { granted, remaining, resetAfterMs, retryAfterMs, 0, state }
local key = KEYS[1]
local need = tonumber(ARGV[1])
local capacity = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])
local want = tonumber(ARGV[5])

local now = sluice_now_us()
local per_token = 1000000 / rate
local full_at = tonumber(redis.call('GET', key)) or now
if full_at < now then full_at = now end
local deficit = full_at - now
local window = capacity * per_token
-- n fits when deficit + n * per_token - window <= 1 (the model's 1 us slack)
local available = sluice_floor_units((window - deficit + 1) / per_token)
local granted = math.min(want, available)

if granted < need then
  return { 0, available, sluice_ceil_ms(deficit),
    sluice_ceil_ms(deficit + need * per_token - window), 0, sluice_int(full_at) }
end

local new_full_at = math.floor(full_at + granted * per_token + 0.5)
local deficit_after = new_full_at - now
redis.call('SET', key, sluice_int(new_full_at), 'PX', math.max(1, sluice_ceil_ms(deficit_after)))
return { granted, sluice_floor_units(capacity - (deficit_after * rate) / 1000000),
  sluice_ceil_ms(deficit_after), 0, 0, sluice_int(new_full_at) }
