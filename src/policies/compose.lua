-- Several limits decided as one: the Lua twin of compose.ts. The script
-- registry (src/stores/redis/multi-script.ts) puts above this text a table
-- sluice_policies of functions(KEYS, ARGV, redis), each a policy's twin as is.
-- KEYS     one key per limit, all in one hash slot
-- ARGV[1]  "now" in µs for test vectors only; empty = Redis TIME
-- then per limit: policy, shadow 1|0, n, and the twin's own n ARGV (cost, '', params…, field)
-- returns  { admitted 0|1, then per limit: allowed, remaining, resetAfterMs, retryAfterMs, delayMs }
-- The twins write as they decide; every key is saved (DUMP, PTTL) before its
-- first write, and a refused request puts every saved key back (RESTORE), so
-- what is stored is all the limits' states, or none of them.
local real = redis
local now = tonumber(ARGV[1])
if now == nil then
  local t = real.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local WRITES = { HSET = true, HDEL = true, PEXPIRE = true, ZADD = true, ZREMRANGEBYSCORE = true, DEL = true, ZREM = true }
local saved, order = {}, {}
local guarded = setmetatable({ call = function(...)
  local cmd, key = ...
  if WRITES[string.upper(cmd)] and saved[key] == nil then
    saved[key] = { real.call('DUMP', key), real.call('PTTL', key) }
    order[#order + 1] = key
  end
  return real.call(...)
end }, { __index = real })

local limits = {}
local i = 2
while i <= #ARGV do
  local n = tonumber(ARGV[i + 2])
  local args = {}
  for j = 1, n do args[j] = ARGV[i + 2 + j] end
  args[2] = now
  limits[#limits + 1] = { run = sluice_policies[ARGV[i]], shadow = ARGV[i + 1] == '1', args = args }
  i = i + 3 + n
end

local replies, admitted = {}, true
for k, limit in ipairs(limits) do
  replies[k] = limit.run({ KEYS[k] }, limit.args, guarded)
  if replies[k][1] ~= 1 and not limit.shadow then admitted = false end
end

if not admitted then
  for _, key in ipairs(order) do
    local dump, pttl = saved[key][1], saved[key][2]
    if dump then
      if pttl < 0 then pttl = 0 end
      real.call('RESTORE', key, pttl, dump, 'REPLACE')
    else
      real.call('DEL', key)
    end
  end
  -- a limit that admitted was not charged: it reports a peek of its restored state
  for k, limit in ipairs(limits) do
    if replies[k][1] == 1 then
      limit.args[1] = '0'
      local peek = limit.run({ KEYS[k] }, limit.args, real)
      replies[k] = { 1, peek[2], peek[3], 0, 0 }
    end
  end
end

local out = { admitted and 1 or 0 }
for k = 1, #limits do
  local r = replies[k]
  out[#out + 1] = r[1]
  out[#out + 1] = r[2]
  out[#out + 1] = r[3]
  out[#out + 1] = r[4] or 0
  out[#out + 1] = r[5] or 0
end
return out
