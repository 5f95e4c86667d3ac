-- Token bucket adjust, twin of model.ts adjust(). ARGV[1] units to take whatever
-- the limit (negative: give back), ARGV[3] capacity, ARGV[4] refillPerSecond.
-- A debt past empty is a full deficit whose refill starts at a later µs.
-- Returns the state written.
local delta = tonumber(ARGV[1])
local rate = tonumber(ARGV[4])
local full = tonumber(ARGV[3]) * 1000000
local now = sluice_now
local total = 0
local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
if raw then
  local colon = string.find(raw, ':', 1, true)
  local ts = tonumber(string.sub(raw, colon + 1))
  local missing = tonumber(string.sub(raw, 1, colon - 1))
  if missing > full then missing = full end
  if ts > now then
    total = missing + math.floor((ts - now) * rate + 0.5)
  else
    total = missing - math.floor((now - ts) * rate + 0.5)
    if total < 0 then total = 0 end
  end
end
total = total + delta * 1000000
if total < 0 then total = 0 end
local deficit, ts = total, now
if total > full then
  deficit = full
  ts = now + math.ceil((total - full) / rate)
end
local state = string.format('%d:%d', deficit, ts)
sluice_save(state, math.max(1, math.ceil((ts - now + deficit / rate) / 1000)))
return state
