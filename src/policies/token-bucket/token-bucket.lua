-- Token bucket twin of model.ts. ARGV[3] capacity, ARGV[4] refillPerSecond.
-- State: one integer, the microsecond at which the bucket is full again.
local key = KEYS[1]
local cost = tonumber(ARGV[1])
local capacity = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])

local now = sluice_now_us()
local per_token = 1000000 / rate
local full_at = tonumber(redis.call('GET', key)) or now
if full_at < now then full_at = now end
local deficit = full_at - now
local window = capacity * per_token
local want = cost
if cost == 0 then want = 1 end
local needed = deficit + want * per_token - window
local allowed = needed <= 1

if (not allowed) or cost == 0 then
  local retry = 0
  if not allowed then retry = sluice_ceil_ms(needed) end
  return { allowed and 1 or 0, sluice_floor_units(capacity - (deficit * rate) / 1000000),
    sluice_ceil_ms(deficit), retry, 0, sluice_int(full_at) }
end

local new_full_at = math.floor(full_at + cost * per_token + 0.5)
local deficit_after = new_full_at - now
redis.call('SET', key, sluice_int(new_full_at), 'PX', math.max(1, sluice_ceil_ms(deficit_after)))
return { 1, sluice_floor_units(capacity - (deficit_after * rate) / 1000000),
  sluice_ceil_ms(deficit_after), 0, 0, sluice_int(new_full_at) }
