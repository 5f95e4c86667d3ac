-- Sliding window log twin of model.ts. ARGV[3] limit, ARGV[4] windowMs.
-- State: a ZSET, one member "<µs>:<seq>" scored <µs> per admitted unit; the
-- returned state is the in-window timestamps joined by ','.
local key = KEYS[1]
local cost = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
local window_us = tonumber(ARGV[4]) * 1000

local now = sluice_now
local cutoff = now - window_us
-- read only: peeks and refusals write nothing, even the pruning
local members = redis.call('ZRANGEBYSCORE', key, '(' .. string.format('%.0f', cutoff), '+inf')
local stamps = {}
for i, member in ipairs(members) do stamps[i] = string.match(member, '^(%d+)') end
local count = #stamps
local want = cost
if cost == 0 then want = 1 end
local fits = count + want <= limit

local function until_leaves(stamp)
  return math.max(0, math.ceil((tonumber(stamp) + window_us - now) / 1000))
end

if (not fits) or cost == 0 then
  local retry = 0
  if not fits then
    if count == 0 then
      retry = math.max(0, math.ceil((window_us) / 1000))
    else
      retry = until_leaves(stamps[math.min(count + want - limit, count)])
    end
  end
  local reset = 0
  if count > 0 then reset = until_leaves(stamps[count]) end
  return { fits and 1 or 0, limit - count, reset, retry, 0, sluice_peeked_fn(function() return table.concat(stamps, ',') end) }
end

redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', cutoff))
local now_text = string.format('%.0f', now)
local args = {}
for i = 1, cost do
  stamps[count + i] = now_text
  args[#args + 1] = now_text
  args[#args + 1] = now_text .. ':' .. (count + i)
  if #args >= 1000 then
    redis.call('ZADD', key, unpack(args))
    args = {}
  end
end
if #args > 0 then redis.call('ZADD', key, unpack(args)) end
-- the newest entry is now, unless a clock stepped back behind an older one
local newest = now
if count > 0 and tonumber(stamps[count]) > now then newest = tonumber(stamps[count]) end
local reset = math.max(0, math.ceil((newest + window_us - now) / 1000))
redis.call('PEXPIRE', key, math.max(1, reset))
return { 1, limit - #stamps, reset, 0, 0, '' }
