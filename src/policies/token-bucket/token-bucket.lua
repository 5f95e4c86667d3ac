-- Token bucket twin of model.ts. ARGV[3] capacity, ARGV[4] refillPerSecond.
-- State: "<tokens missing, in millionths>:<µs of the last update>", two integers.
local cost = tonumber(ARGV[1])
local capacity = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])

local now = sluice_now
local full = capacity * 1000000
local deficit = 0
local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
if raw then
  local d, t = string.match(raw, '^(%d+):(%d+)$')
  local elapsed = now - tonumber(t)
  if elapsed < 0 then elapsed = 0 end
  deficit = math.max(0, math.min(full, tonumber(d)) - math.floor(elapsed * rate + 0.5))
end
local want = cost
if cost == 0 then want = 1 end
local allowed = full - deficit >= want * 1000000

if (not allowed) or cost == 0 then
  local retry = 0
  if not allowed then retry = math.max(0, math.ceil(((want * 1000000 - (full - deficit)) / rate) / 1000)) end
  local state = raw or (string.format('%.0f', deficit) .. ':' .. string.format('%.0f', now))
  return { allowed and 1 or 0, math.floor((full - deficit) / 1000000), math.max(0, math.ceil((deficit / rate) / 1000)), retry, 0, (ARGV[1] == '0' and (state) or '') }
end

local after = deficit + cost * 1000000
local reset = math.max(0, math.ceil((after / rate) / 1000))
local state = string.format('%.0f', after) .. ':' .. string.format('%.0f', now)
sluice_save(state, math.max(1, reset))
return { 1, math.floor((full - after) / 1000000), reset, 0, 0, '' }
