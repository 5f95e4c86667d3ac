-- Lua twin of src/policies/penalty/model.ts stepPenalty(): the penalty box of
-- one key, run inside the decision's script (same hash tag, same slot).
-- KEYS[1]  the penalty key (pb:{tenant}…, beside the bucket), a string with a PX TTL
-- ARGV[1]  the rate limit's outcome: 1 refused (count it), 0 admitted or a check before the decision
-- ARGV[2]  "now" in µs for test vectors only; empty = Redis TIME
-- ARGV[3..8] after, withinMs, blockMs, backoff, maxMs, forgiveAfterMs
-- returns  { blocked 0|1 (already blocked: nothing counted), retryAfterMs, blockedUntilMs, state }
local now = tonumber(ARGV[2])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local after, within, block = tonumber(ARGV[3]), tonumber(ARGV[4]) * 1000, tonumber(ARGV[5]) * 1000
local backoff, max, forgive = tonumber(ARGV[6]), tonumber(ARGV[7]) * 1000, tonumber(ARGV[8]) * 1000
local strikes, run, level, untilUs = 0, 0, 0, 0
local raw = redis.call('GET', KEYS[1])
if raw then
  local a, b, c, d = string.match(raw, '^(%d+):(%d+):(%d+):(%d+)$')
  strikes, run, level, untilUs = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
end
if untilUs > 0 and now >= untilUs + forgive then level, untilUs = 0, 0 end
if strikes > 0 and now >= run + within then strikes, run = 0, 0 end
local function state()
  return string.format('%.0f', strikes) .. ':' .. string.format('%.0f', run) .. ':' .. string.format('%.0f', level) .. ':' .. string.format('%.0f', untilUs)
end
local function ceil_ms(us)
  if us <= 0 then return 0 end
  return math.ceil(us / 1000)
end
if now < untilUs then return { 1, ceil_ms(untilUs - now), math.ceil(untilUs / 1000), state() } end
if ARGV[1] ~= '1' then return { 0, 0, 0, state() } end
if strikes == 0 then run = now end
strikes = strikes + 1
local retry, blocked_until = 0, 0
if strikes >= after then
  local b = math.min(block, max)
  local i = 0
  while i < level and b < max do
    b = math.min(b * backoff, max)
    i = i + 1
  end
  untilUs = now + math.floor(b)
  level = level + 1
  strikes, run = 0, 0
  retry, blocked_until = ceil_ms(untilUs - now), math.ceil(untilUs / 1000)
end
local last = 0
if untilUs > 0 then last = untilUs + forgive end
if strikes > 0 and run + within > last then last = run + within end
redis.call('SET', KEYS[1], state(), 'PX', math.max(1, ceil_ms(last - now)))
return { 0, retry, blocked_until, state() }
