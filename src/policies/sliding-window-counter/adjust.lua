-- Sliding window counter adjust, twin of model.ts adjust(). ARGV[1] units to
-- take whatever the limit (negative: give back, down to an empty current
-- window), ARGV[4] windowMs. Only the current window's count changes; windows
-- that rolled over shift as in a decision. Returns the state written.
local delta = tonumber(ARGV[1])
local window_us = tonumber(ARGV[4]) * 1000
local now = sluice_now
local start = now - math.fmod(now, window_us)
local cur, prev = 0, 0
local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
if raw then
  local a, b, d = string.match(raw, '^(%d+) (%d+) (%d+)$')
  local s, c = tonumber(a), tonumber(b)
  if s == start then
    cur, prev = c, tonumber(d)
  elseif s == start - window_us then
    prev = c
  end
end
cur = cur + delta
if cur < 0 then cur = 0 end
local until_empty = 0
if cur > 0 then
  until_empty = start + 2 * window_us - now
elseif prev > 0 then
  until_empty = start + window_us - now
end
local state = string.format('%.0f', start) .. ' ' .. string.format('%.0f', cur) .. ' ' .. string.format('%.0f', prev)
sluice_save(state, math.max(1, math.ceil(until_empty / 1000)))
return state
