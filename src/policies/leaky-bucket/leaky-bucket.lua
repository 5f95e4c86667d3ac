-- Leaky bucket (nginx limit_req) twin of model.ts.
-- ARGV[3] ratePerSecond, ARGV[4] burst, ARGV[5] requests served undelayed.
-- State: one integer, the microsecond at which the queue is empty.
local key = KEYS[1]
local cost = tonumber(ARGV[1])
local rate = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local undelayed = tonumber(ARGV[5])

local now = sluice_now_us()
local interval = 1000000 / rate
local empty_at = tonumber(redis.call('GET', key)) or now
if empty_at < now then empty_at = now end
local ahead = empty_at - now
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
    sluice_ceil_ms(ahead), retry, delay, sluice_int(empty_at) }
end

local ahead_after = math.floor(ahead + cost * interval)
local new_empty_at = now + ahead_after
redis.call('SET', key, sluice_int(new_empty_at), 'PX', math.max(1, sluice_ceil_ms(ahead_after)))
return { 1, sluice_floor_units(burst + 1 - ahead_after / interval),
  sluice_ceil_ms(ahead_after), 0, delay, sluice_int(new_empty_at) }
