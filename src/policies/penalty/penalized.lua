-- A limit with a penalty box in ONE script: the twin of penalized.ts. The
-- registry (src/stores/redis/penalty-script.ts) puts above this text the
-- functions sluice_policy (the limit's twin as is) and sluice_penalty
-- (penalty.lua), each of (KEYS, ARGV, redis).
-- KEYS[1]  the bucket's key, KEYS[2] the penalty key (same hash tag: one slot)
-- ARGV[1]  "now" in µs for test vectors only; empty = Redis TIME
-- ARGV[2]  n, then the limit's own n ARGV (cost, '', params…, field), then the 6 penalty parameters
-- returns  { allowed, remaining, resetAfterMs, retryAfterMs, delayMs, blocked 0|1, blockedUntilMs }
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local n = tonumber(ARGV[2])
local own = {}
for j = 1, n do own[j] = ARGV[2 + j] end
own[2] = now
local pen = { '0', now }
for j = 1, 6 do pen[2 + j] = ARGV[2 + n + j] end
local gate = sluice_penalty({ KEYS[2] }, pen, redis)
if gate[1] == 1 then return { 0, 0, gate[2], gate[2], 0, 1, gate[3] } end
local r = sluice_policy({ KEYS[1] }, own, redis)
local retry, blocked_until = r[4] or 0, 0
-- a refusal (not a peek) is counted by the box; the limit itself was charged nothing
if r[1] ~= 1 and tonumber(own[1]) > 0 then
  pen[1] = '1'
  local p = sluice_penalty({ KEYS[2] }, pen, redis)
  if p[2] > retry then retry = p[2] end
  blocked_until = p[3]
end
return { r[1], r[2] or 0, r[3] or 0, retry, r[5] or 0, 0, blocked_until }
