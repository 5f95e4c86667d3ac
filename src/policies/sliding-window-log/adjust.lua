-- Sliding window log adjust, twin of model.ts adjust(). ARGV[1] units: a charge
-- adds that many entries at now, a refund (negative) removes the newest entries
-- still in the window. ARGV[3] limit, ARGV[4] windowMs. The log keeps its newest
-- `limit` entries. The set is rewritten with members "<µs>:<rank>", so a later
-- decision's "<now>:<count + i>" never names a member that exists.
-- Returns the in-window timestamps joined by ',', as a peek gives them.
local key = KEYS[1]
local delta = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
local window_us = tonumber(ARGV[4]) * 1000
local now = sluice_now
local members = redis.call('ZRANGEBYSCORE', key, '(' .. string.format('%.0f', now - window_us), '+inf')
local stamps = {}
for i, member in ipairs(members) do stamps[i] = tonumber(string.match(member, '^(%d+)')) end
if delta > 0 then
  for _ = 1, delta do stamps[#stamps + 1] = now end
  table.sort(stamps)
else
  for _ = 1, math.min(-delta, #stamps) do stamps[#stamps] = nil end
end
local first = math.max(1, #stamps - limit + 1)
local kept = {}
for i = first, #stamps do kept[#kept + 1] = string.format('%.0f', stamps[i]) end
redis.call('DEL', key)
local args = {}
for i, stamp in ipairs(kept) do
  args[#args + 1] = stamp
  args[#args + 1] = stamp .. ':' .. i
  if #args >= 1000 then
    redis.call('ZADD', key, unpack(args))
    args = {}
  end
end
if #args > 0 then redis.call('ZADD', key, unpack(args)) end
if #kept > 0 then
  redis.call('PEXPIRE', key, math.max(1, math.ceil((tonumber(kept[#kept]) + window_us - now) / 1000)))
end
return table.concat(kept, ',')
