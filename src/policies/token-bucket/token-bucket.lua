-- Token bucket twin of model.ts. ARGV[3] capacity, ARGV[4] refillPerSecond.
-- State: "<tokens missing, in millionths>:<µs of the last update>", two integers.
-- The default policy and the hottest script: the prelude's save is
-- inlined, the state is read with a plain find and written with one format,
-- and an allowed reply leaves off its trailing zeros (see prelude.lua).
local cost = tonumber(ARGV[1])
local rate = tonumber(ARGV[4])
local full = tonumber(ARGV[3]) * 1000000
local key, field = KEYS[1], ARGV[#ARGV]

local now = sluice_now
local deficit = 0
local raw = redis.call('HGET', key, field)
if raw then
  local colon = string.find(raw, ':', 1, true)
  local elapsed = now - tonumber(string.sub(raw, colon + 1))
  if elapsed < 0 then elapsed = 0 end
  -- a lowered capacity: never more missing than the whole bucket
  local missing = tonumber(string.sub(raw, 1, colon - 1))
  if missing > full then missing = full end
  deficit = missing - math.floor(elapsed * rate + 0.5)
  if deficit < 0 then deficit = 0 end
end
local want = cost
if cost == 0 then want = 1 end
local allowed = full - deficit >= want * 1000000

if (not allowed) or cost == 0 then
  local retry = 0
  if not allowed then retry = math.max(0, math.ceil(((want * 1000000 - (full - deficit)) / rate) / 1000)) end
  local state = raw or string.format('%d:%d', deficit, now)
  return { allowed and 1 or 0, math.floor((full - deficit) / 1000000), math.max(0, math.ceil((deficit / rate) / 1000)), retry, 0, (ARGV[1] == '0' and (state) or '') }
end

local after = deficit + cost * 1000000
local reset = math.ceil((after / rate) / 1000)
local ttl_ms = reset
if ttl_ms < 1 then ttl_ms = 1 end
-- sluice_save, inlined
if redis.call('HSET', key, field, string.format('%d:%d', after, now)) == 0 then
  redis.call('PEXPIRE', key, ttl_ms, 'GT')
elseif redis.call('PTTL', key) < ttl_ms then
  redis.call('PEXPIRE', key, ttl_ms)
end
return { 1, math.floor((full - after) / 1000000), reset }
